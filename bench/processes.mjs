/**
 * The processes of a benchmark run and what is measured from outside them:
 * a fresh PostgreSQL database, the service (`node dist/app/server.js`), the
 * floor server, their start-up time to the first 200, their memory and CPU
 * time, read from /proc as the kernel counts them.
 */
import { spawn } from 'node:child_process'
import { openSync } from 'node:fs'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'

export const ADMIN_URL = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** One statement on a connection of its own (the run's few looks at a database between measurements). */
export async function queryOnce (databaseUrl, sql) {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try { return await client.query(sql) } finally { await client.end() }
}

const admin = async sql => await queryOnce(ADMIN_URL, sql)

/** A new, empty database (the run's own unless named otherwise); `drop()` removes it. */
export async function createDatabase (name = `bench_${process.pid}`) {
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await admin(`CREATE DATABASE ${name}`)
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return { name, url: url.toString(), drop: async () => { await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) } }
}

export async function postgresVersion () {
  return (await admin('SHOW server_version')).rows[0].server_version
}

/** Resident memory of a process in MB: now (VmRSS) and the highest so far (VmHWM). */
export async function memoryOf (pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const mb = key => Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))[1]) / 1024
  return { rss: mb('VmRSS'), peak: mb('VmHWM') }
}

/**
 * Sets a process's peak resident memory (VmHWM) back to what it holds now
 * (proc(5), `clear_refs` 5, Linux 4.0 and later): the peak then read is that
 * of what came after, not of the process's past.
 */
export async function resetPeak (pid) {
  await writeFile(`/proc/${pid}/clear_refs`, '5')
}

/**
 * CPU time a process has used so far, user and system, in seconds: fields 14
 * and 15 of /proc/<pid>/stat, in clock ticks (100 a second on Linux).
 */
export async function cpuSecondsOf (pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) may hold spaces: the fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * CPU time of every PostgreSQL process of the machine so far, by pid (the
 * server's processes are all named `postgres`): what PostgreSQL spent
 * between two readings is `postgresCpuSince(before)`.
 */
export async function postgresCpu () {
  const byPid = new Map()
  for (const pid of (await readdir('/proc')).filter(name => /^\d+$/.test(name))) {
    try {
      if ((await readFile(`/proc/${pid}/comm`, 'utf8')).trim() === 'postgres') byPid.set(pid, await cpuSecondsOf(pid))
    } catch {
      // Gone between the listing and the read.
    }
  }
  return byPid
}

/** The seconds PostgreSQL's processes spent since `before` (postgresCpu): a backend that ended meanwhile is not counted. */
export async function postgresCpuSince (before) {
  let seconds = 0
  for (const [pid, now] of await postgresCpu()) seconds += now - (before.get(pid) ?? 0)
  return seconds
}

/** A loopback port nobody listens on now (two runs on one machine must not collide). */
export async function freePort () {
  const server = createServer()
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise(resolve => server.close(resolve))
  return port
}

/** Answers 200 yet? A fresh connection each time, as a first client would open. */
async function answers (url) {
  try {
    const res = await fetch(url, { headers: { accept: 'application/json', connection: 'close' } })
    await res.arrayBuffer()
    return res.status === 200
  } catch {
    return false
  }
}

/**
 * Starts a Node server as its own process and waits for `readyPath` to answer
 * 200; `startupMs` is the time from spawn to that first 200. Its output goes
 * to `logFile`.
 */
export async function startServer ({ script, nodeArgs = [], env, port, readyPath, logFile, timeoutMs = 60_000 }) {
  const log = openSync(logFile, 'a')
  const started = performance.now()
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', log, log]
  })
  const exited = new Promise(resolve => child.once('exit', code => resolve(code)))
  let exitCode
  void exited.then(code => { exitCode = code })
  const url = `http://127.0.0.1:${port}`
  while (!(await answers(url + readyPath))) {
    if (exitCode !== undefined) throw new Error(`${script} exited with ${exitCode} before it answered; see ${logFile}`)
    if (performance.now() - started > timeoutMs) {
      child.kill('SIGKILL')
      throw new Error(`${script} did not answer 200 on ${readyPath} within ${timeoutMs} ms; see ${logFile}`)
    }
    await sleep(5)
  }
  return {
    url,
    pid: child.pid,
    startupMs: performance.now() - started,
    memory: async () => await memoryOf(child.pid),
    cpuSeconds: async () => await cpuSecondsOf(child.pid),
    /** SIGTERM (a graceful close: a CPU profile is written then), SIGKILL after 10 s. */
    async stop () {
      if (exitCode !== undefined) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    }
  }
}
