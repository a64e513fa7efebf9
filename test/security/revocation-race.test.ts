import t from 'tap'
import { createServer, connect, type AddressInfo, type Socket } from 'node:net'
import { build, freshDatabase } from '../helper.js'
import { TOKEN_REVOKED, USER_CHANGED } from '../../core/security/principal-cache.js'

/**
 * A process must not keep a principal it read before a revocation it heard
 * of while the read was under way (docs/architecture.md, "What a process
 * keeps"): else the session the other process ended lives on in this one
 * until the token expires. The interleaving is made, not waited for: this
 * process reaches PostgreSQL through a proxy that holds back the server's
 * answers, so that its read of a token's principal is answered (from a
 * snapshot before the logout or password change) only after it has heard
 * of the change.
 */
interface Held { listens: boolean, client: Socket, chunks: Buffer[] }
interface ReplyHoldingProxy {
  url: string
  /** From now on, what PostgreSQL answers waits in the proxy. */
  hold: () => void
  /** How many answers wait, on the connection that LISTENs or on the others. */
  held: (listens: boolean) => number
  /** Passes on what waits on the connection that LISTENs (a notification), or on the others. */
  release: (listens: boolean) => void
  /** Passes on everything, and holds nothing more. */
  resume: () => void
}
/** A TCP proxy in front of PostgreSQL that can hold back what the server answers. */
async function replyHoldingProxy (databaseUrl: string): Promise<ReplyHoldingProxy> {
  const target = new URL(databaseUrl)
  const connections = new Set<Held>()
  let holding = false
  const proxy = createServer(client => {
    const server = connect(Number(target.port === '' ? 5432 : target.port), target.hostname)
    const held: Held = { listens: false, client, chunks: [] }
    connections.add(held)
    client.on('data', (chunk: Buffer) => {
      if (chunk.includes('LISTEN ')) held.listens = true
      server.write(chunk)
    })
    server.on('data', (chunk: Buffer) => { if (holding) held.chunks.push(chunk); else client.write(chunk) })
    const close = (): void => { connections.delete(held); client.destroy(); server.destroy() }
    client.on('error', close).on('close', close)
    server.on('error', close).on('close', close)
  })
  await new Promise<void>(resolve => proxy.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const { client } of connections) client.destroy()
    await new Promise(resolve => proxy.close(resolve))
  })
  const url = new URL(databaseUrl)
  url.hostname = '127.0.0.1'
  url.port = String((proxy.address() as AddressInfo).port)
  url.searchParams.set('application_name', 'held')
  const release = (listens: boolean | null): void => {
    for (const c of connections) if (listens === null || c.listens === listens) for (const chunk of c.chunks.splice(0)) c.client.write(chunk)
  }
  return {
    url: url.toString(),
    hold: () => { holding = true },
    held: listens => [...connections].filter(c => c.listens === listens).reduce((n, c) => n + c.chunks.length, 0),
    release,
    resume: () => { holding = false; release(null) }
  }
}

async function until (condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!await condition()) await new Promise(resolve => setImmediate(resolve))
}

const databaseUrl = await freshDatabase(t)
const proxy = await replyHoldingProxy(databaseUrl)
const here = await build(t, { databaseUrl: proxy.url })
const there = await build(t, { databaseUrl })
await there.tokenFor('sam')
const admin = await there.tokenFor('admin')
const samKey = async (): Promise<string> => (await there.app.db.query<{ token_key: string }>("SELECT token_key FROM users WHERE id = 'sam'")).rows[0].token_key
/** Whether this process's read of a principal (the query that checks revocation) ran to its end in PostgreSQL since `since`. */
const principalRead = async (since: Date): Promise<boolean> => (await there.app.db.query(
  "SELECT 1 FROM pg_stat_activity WHERE application_name = 'held' AND state = 'idle' AND query LIKE '%AS revoked%' AND query_start >= $1", [since])).rowCount > 0

const endings = {
  'a logout in another process': { topic: TOKEN_REVOKED, end: async (token: string) => await there.call('POST', '/@logout', undefined, token), ended: 204 },
  'a password change in another process': { topic: USER_CHANGED, end: async () => await there.call('PATCH', '/@users/sam', { password: `p-${Math.random()}` }, admin), ended: 204 }
}

for (const [name, { topic, end, ended }] of Object.entries(endings)) {
  t.test(`${name} while this process reads the token's principal ends the session here too`, async t => {
    const token = here.app.issueToken({ id: 'sam', fullname: 'User sam', token_key: await samKey() })
    const heard = new Promise<void>(resolve => { here.app.db.notifications.onChange(topic, () => { resolve() }) })
    const since = (await there.app.db.query<{ at: Date }>('SELECT clock_timestamp() AS at')).rows[0].at
    // A connection of the pool must be open and idle: a new one's handshake would be held too.
    await here.app.db.query('SELECT 1')
    proxy.hold()
    const reading = here.call('GET', '/@users/sam', undefined, token)
    await until(async () => await principalRead(since)) // answered from before the change; the answer waits in the proxy
    t.equal((await end(token)).statusCode, ended, 'the other process ends the session')
    await until(() => proxy.held(true) > 0)
    proxy.release(true)
    await heard // this process heard of it (its principal cache hears first: it listened first)
    proxy.resume()
    t.equal((await reading).statusCode, 200, 'the request that began before the change is answered as it began')
    t.equal((await here.call('GET', '/@users/sam', undefined, token)).statusCode, 401, 'afterwards, the token is refused here')
  })
}
