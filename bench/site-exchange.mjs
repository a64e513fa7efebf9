/**
 * The command line of a site's move (issue 26) as the bench runs it:
 * `npm run site -- import|export <folder>` is `node dist/app/site-cli.js`
 * (package.json's `site` script, after its build), started here as a
 * process of its own against a database no service uses meanwhile, timed
 * from spawn to exit, its resident memory read from /proc while it runs.
 */
import { spawn } from 'node:child_process'
import { openSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { memoryOf } from './processes.mjs'

/** How often the command's peak resident memory (VmHWM) is read: the last reading before it exits is its peak. */
const SAMPLE_MS = 100
const RUNNING = Symbol('running')

/**
 * `npm run site -- <args>` with `env` (its DATABASE_URL): its seconds, its
 * report (stdout) and its peak RSS in MB. Its progress goes to `logFile`;
 * an exit code other than 0 (something left out, or a failure) throws.
 */
export async function runSite (root, args, env, logFile) {
  const started = performance.now()
  const child = spawn(process.execPath, [join(root, 'dist', 'app', 'site-cli.js'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', openSync(logFile, 'a')]
  })
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', text => { stdout += text })
  const exited = new Promise(resolve => child.once('close', resolve))
  let peakMB = 0
  let code = RUNNING
  while (code === RUNNING) {
    try {
      peakMB = (await memoryOf(child.pid)).peak
    } catch {
      // Exited between two readings: /proc keeps no memory of a process that ended.
    }
    code = await Promise.race([exited, sleep(SAMPLE_MS, RUNNING)])
  }
  const seconds = (performance.now() - started) / 1000
  if (code !== 0) throw new Error(`npm run site -- ${args[0]} exited with ${code}: ${stdout.trim().split('\n').slice(-5).join(' | ')} (see ${logFile})`)
  return { seconds, stdout, peakMB }
}

/** A count of the command's report (`objects imported: 100000`, `exported 100001 objects and 0 blobs`). */
export function reported (stdout, pattern) {
  const match = stdout.match(pattern)
  if (match === null) throw new Error(`the report does not say ${pattern}: ${stdout.slice(0, 500)}`)
  return Number(match[1])
}

export const IMPORTED = /^objects imported: (\d+)$/m
export const EXPORTED = /^exported (\d+) objects and (?:\d+) blobs/m
