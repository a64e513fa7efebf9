// Shared start/stop and HTTP helpers for the solr-dev conformance suite (not a test file).
// Each test file starts its own server on a free port with a temporary data directory, and
// stops it by PID (SIGTERM) at teardown.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
const here = dirname(fileURLToPath(import.meta.url))
export const SOLR_DEV = resolve(here, '../../infra/solr-dev')
export const TEST_CONFIGSET = join(SOLR_DEV, 'test-configset')

interface TapLike { teardown: (fn: () => unknown) => void }

/** A JSON answer: HTTP status and parsed body (any: Solr's answers are checked field by field). */
export interface Answer {
  status: number

  body: any
  contentType: string
}

export type Query = Record<string, string | number | boolean | Array<string | number>>

export interface SolrDev {
  port: number
  /** http://127.0.0.1:PORT/solr */
  url: string
  dataDir: string
  pid: number
  /** GET /solr/<path>?<query> */
  get: (path: string, query?: Query) => Promise<Answer>
  /** POST a JSON body to /solr/<path>?<query> */
  post: (path: string, body: unknown, query?: Query) => Promise<Answer>
  /** Raw request, for content types and methods the helpers above do not cover. */
  request: (path: string, init?: RequestInit) => Promise<Response>
  /** SIGTERM, then wait for the process to exit. */
  stop: () => Promise<void>
  /** Start again on the same port and data directory (after stop). */
  start: () => Promise<void>
}

/** A port nothing listens on: bind port 0, note it, close. */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      srv.close(() => { resolve(port) })
    })
  })
}

export function queryString (query: Query = {}): string {
  const qs = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) {
    for (const one of Array.isArray(v) ? v : [v]) qs.append(k, String(one))
  }
  const s = qs.toString()
  return s === '' ? '' : `?${s}`
}

async function answer (res: Response): Promise<Answer> {
  const text = await res.text()
  const contentType = res.headers.get('content-type') ?? ''
  return { status: res.status, body: contentType.includes('json') && text !== '' ? JSON.parse(text) : text, contentType }
}

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Starts solr-dev with the given cores (default: core "test" on the test configset) and
 * registers its shutdown and the removal of its data directory with the test.
 */
export async function startSolrDev (t: TapLike, options: { cores?: Record<string, string>, configsets?: string, basicAuth?: string } = {}): Promise<SolrDev> {
  const cores = options.cores ?? { test: TEST_CONFIGSET }
  const dataDir = await mkdtemp(join(tmpdir(), 'solr-dev-test-'))
  const port = await freePort()
  const args = ['--port', String(port), '--data', dataDir, '--timeout', '120']
  for (const [name, dir] of Object.entries(cores)) args.push('--core', `${name}=${dir}`)
  if (options.configsets !== undefined) args.push('--configsets', options.configsets)
  if (options.basicAuth !== undefined) args.push('--basic-auth', options.basicAuth)
  const authorization: Record<string, string> = options.basicAuth === undefined ? {} : { authorization: `Basic ${Buffer.from(options.basicAuth).toString('base64')}` }

  const url = `http://127.0.0.1:${port}/solr`
  const request = async (path: string, init?: RequestInit): Promise<Response> =>
    await fetch(`${url}/${path}`, { ...init, headers: { ...authorization, ...init?.headers as Record<string, string> } })
  const solr: SolrDev = {
    port,
    url,
    dataDir,
    pid: 0,
    request,
    get: async (path, query) => await answer(await request(`${path}${queryString(query)}`)),
    post: async (path, body, query) => await answer(await request(`${path}${queryString(query)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body)
    })),
    start: async () => {
      await run(join(SOLR_DEV, 'start'), args, { timeout: 180_000 })
      solr.pid = Number((await readFile(join(dataDir, 'solr-dev.pid'), 'utf8')).trim())
    },
    stop: async () => {
      const pid = solr.pid
      if (pid === 0 || !alive(pid)) return
      process.kill(pid, 'SIGTERM')
      const deadline = Date.now() + 30_000
      while (alive(pid)) {
        if (Date.now() > deadline) throw new Error(`solr-dev pid ${pid} did not exit after SIGTERM`)
        await new Promise(resolve => setTimeout(resolve, 50))
      }
      solr.pid = 0
    }
  }
  t.teardown(async () => {
    await solr.stop()
    await rm(dataDir, { recursive: true, force: true })
  })
  await solr.start()
  return solr
}

/** Adds documents and commits, as most tests need a committed index. */
export async function index (solr: SolrDev, core: string, docs: object[]): Promise<void> {
  const res = await solr.post(`${core}/update`, docs, { commit: 'true' })
  if (res.status !== 200) throw new Error(`indexing failed: ${JSON.stringify(res.body)}`)
}

/** The ids of a select answer, in order. */
export function ids (res: Answer): string[] {
  return res.body.response.docs.map((d: any) => d.id)
}

/** Solr's error shape for a status and message. */
export function solrError (code: number, msg: string): object {
  return {
    metadata: ['error-class', 'org.apache.solr.common.SolrException', 'root-error-class', 'org.apache.solr.common.SolrException'],
    msg,
    code
  }
}
