import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectRoot } from '../../core/config/paths.js'

/**
 * A newcomer's path: `npm start` (the built server) with no database server
 * configured and no settings but a port, in an empty folder. It starts on the
 * embedded PostgreSQL, prints the admin password once, serves the client
 * flow, and keeps its data across a restart.
 */
async function freePort (): Promise<number> {
  return await new Promise(resolve => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

interface Running { child: ChildProcess, output: () => string }

async function start (cwd: string, port: number): Promise<Running> {
  const server = join(projectRoot, 'dist', 'app', 'server.js')
  const child = spawn(process.execPath, [server], { cwd, env: { PATH: process.env.PATH ?? '', PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const deadline = Date.now() + 30000
  while (!output.includes('"msg":"ready"')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start: ${output}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return { child, output: () => output }
}

async function stop (running: Running): Promise<void> {
  const exited = new Promise(resolve => running.child.once('exit', resolve))
  running.child.kill('SIGTERM')
  await exited
}

t.test('npm start on a fresh folder: embedded database, admin password, data kept', async t => {
  const cwd = await mkdtemp(join(tmpdir(), 'newcomer-'))
  t.teardown(async () => { await rm(cwd, { recursive: true, force: true }) })
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const json = { accept: 'application/json', 'content-type': 'application/json' }

  const first = await start(cwd, port)
  t.teardown(() => { first.child.kill('SIGKILL') })
  t.match(first.output(), /"database":"embedded"/, 'runs on the embedded database')
  const password = /with the password (\S+) /.exec(first.output())?.[1]
  t.ok(password, 'the generated admin password is printed once')
  const login = await fetch(`${base}/@login`, { method: 'POST', headers: json, body: JSON.stringify({ login: 'admin', password }) })
  t.equal(login.status, 200)
  const { token } = await login.json() as { token: string }
  const created = await fetch(`${base}/talks`, {
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${token}` },
    body: JSON.stringify({ '@type': 'talk', type_of_talk: 'Lightning Talk', audience: ['Beginner', 'Advanced', 'Professionals'], title: 'Kept across restarts' })
  })
  t.equal(created.status, 201)
  const published = await fetch(`${base}/talks/kept-across-restarts/@workflow/publish`, { method: 'POST', headers: { ...json, authorization: `Bearer ${token}` } })
  t.equal(published.status, 200)
  await stop(first)

  const second = await start(cwd, port)
  t.teardown(() => { second.child.kill('SIGKILL') })
  t.notMatch(second.output(), /with the password/, 'the password is not printed again')
  const list = await fetch(`${base}/talks`, { headers: { accept: 'application/json' } })
  const folder = await list.json() as { items: Array<{ title: string }> }
  t.same(folder.items.map(i => i.title), ['Kept across restarts'], 'the talk survived the restart')
  const renewed = await fetch(`${base}/@login-renew`, { method: 'POST', headers: { accept: 'application/json', authorization: `Bearer ${token}` } })
  t.equal(renewed.status, 200, 'tokens survive restarts (the secret is kept in the database)')
  await stop(second)
})
