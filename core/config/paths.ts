import { existsSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'

/**
 * The project root, found from this file whether it runs as TypeScript source
 * (core/config/) or compiled (dist/core/config/): migrations, content types and the Solr
 * configset are read relative to it.
 */
function findRoot (start: string): string {
  let dir = start
  while (!existsSync(join(dir, 'package.json')) || dir.endsWith('dist')) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`package.json not found above ${start}`)
    dir = parent
  }
  return dir
}

export const projectRoot = findRoot(import.meta.dirname)
export const migrationsDir = join(projectRoot, 'infra', 'migrations')
/** The generated Solr configset's files, committed. */
export const solrConfDir = join(projectRoot, 'infra', 'solr', 'conf')
/** Where compiled (or, under a TypeScript loader, source) modules live. */
export const codeRoot = import.meta.dirname.startsWith(join(projectRoot, 'dist') + sep) ? join(projectRoot, 'dist') : projectRoot
export const contentTypesDir = join(codeRoot, 'content-types')
