import type { Progress } from '../core/solr/maintenance.js'

/**
 * The progress of a command-line run (`npm run solr`, `npm run site`). In a module of its own:
 * each command is an entry point that runs its `main` only when it is the file Node started,
 * and one that another command imported would be bundled into a shared chunk, where it never is
 * (infra/bundle.mjs) — `npm run solr` then did nothing, silently.
 */

/** Where a command writes its report: stdout, or what a test gives. */
export type Output = NodeJS.WriteStream | { isTTY?: boolean, write: (s: string) => unknown }

/** A bar that redraws itself on a terminal, one plain line per batch elsewhere (logs, pipes). */
export function progressPrinter (label: string, out: Output): Progress {
  return (done, total) => {
    const percent = total === 0 ? 100 : Math.floor(done / total * 100)
    if (out.isTTY === true) {
      const width = 30
      const filled = Math.round(percent / 100 * width)
      out.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${percent}% ${done}/${total}${done >= total ? '\n' : ''}`)
    } else {
      out.write(`${label}: ${done}/${total} (${percent}%)\n`)
    }
  }
}
