/**
 * The search and queue servers of a benchmark run, each started by the run on
 * a free loopback port and stopped at its end: solr-dev (infra/solr-dev) with
 * the `plone` core on the generated configset (and `ingest`, on the same
 * configset, for the raw-ingest floor), and a redis-server of its own
 * (never the machine's shared 6379).
 */
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { freePort } from './processes.mjs'

const run = promisify(execFile)
const INGEST_CORE = 'ingest'

export async function startSolr (root) {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-solr-'))
  const port = await freePort()
  await run(join(root, 'infra/solr-dev/start'), ['--port', String(port), '--data', dataDir, '--core', `plone=${join(root, 'infra/solr')}`, '--core', `${INGEST_CORE}=${join(root, 'infra/solr')}`], { timeout: 300_000 })
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    ingestCore: INGEST_CORE,
    env: { SOLR_PORT: String(port), SOLR_BASE: '/solr/plone' },
    async stop () {
      await run(join(root, 'infra/solr-dev/stop'), ['--data', dataDir], { timeout: 60_000 }).catch(() => {})
      await rm(dataDir, { recursive: true, force: true })
    }
  }
}

export async function startRedis () {
  const port = await freePort()
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  const exited = new Promise(resolve => child.once('exit', resolve))
  const url = `redis://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    try {
      await run('redis-cli', ['-p', String(port), 'ping'])
      break
    } catch (err) {
      if (i > 100) throw new Error(`redis-server on port ${port} did not answer: ${err.message}`)
      await sleep(100)
    }
  }
  return { url, async stop () { child.kill('SIGTERM'); await exited } }
}
