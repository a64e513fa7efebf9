import { randomBytes } from 'node:crypto'
import { get } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { build } from '../helper.js'

/**
 * A file's bytes stream from PostgreSQL through one COPY each download
 * (core/content/blobs.ts, fileStream), over a real socket here: readers
 * that go away mid-file, whole and partial downloads at once, and after them
 * no connection left in a COPY, none counted lost, every answer byte-equal.
 */

const SIZE = 6 * 1024 * 1024 + 12_345

interface Answer { status: number, bytes: Buffer }

function download (url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', chunk => chunks.push(chunk))
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(chunks) }) })
      res.on('error', reject)
    }).on('error', reject)
  })
}

/** A reader that takes the first bytes and goes away. */
function abandon (url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = get(url, res => {
      res.once('data', () => { request.destroy(); resolve() })
    })
    request.on('error', err => { if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err) })
  })
}

t.test('downloads stream by COPY: readers that leave, whole and partial readers at once', async t => {
  const { app, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const bytes = randomBytes(SIZE)
  const created = await call('POST', '/', { '@type': 'File', id: 'big', title: 'Big', file: { data: bytes.toString('base64'), encoding: 'base64', filename: 'big.bin', 'content-type': 'application/octet-stream' } }, admin)
  t.equal(created.statusCode, 201, created.body)
  t.equal((await call('POST', '/big/@workflow/publish', {}, admin)).statusCode, 200)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/big/@@download/file`
  const lostBefore = app.db.faults().connections_lost

  const ranges = [[0, 0], [1, 262_143], [262_144, 262_144 * 3], [SIZE - 100, SIZE - 1], [12_345, SIZE - 1]]
  const [whole, ...partial] = await Promise.all([
    download(url),
    ...ranges.map(async ([from, to]) => await download(url, { Range: `bytes=${from}-${to}` })),
    ...Array.from({ length: 12 }, async () => { await abandon(url); return null })
  ])
  t.equal(whole?.status, 200)
  t.ok(whole?.bytes.equals(bytes), 'the whole file, byte-equal')
  ranges.forEach(([from, to], i) => {
    t.equal(partial[i]?.status, 206, `bytes ${from}-${to}`)
    t.ok(partial[i]?.bytes.equals(bytes.subarray(from, to + 1)), `bytes ${from}-${to}, byte-equal`)
  })

  // The abandoned COPYs end with their connections (closed, not handed out again), and the pool serves on.
  let copying = -1
  for (let wait = 0; wait < 100 && copying !== 0; wait++) {
    if (wait > 0) await new Promise(resolve => setTimeout(resolve, 100))
    const { rows: [row] } = await app.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'COPY (SELECT lo_get%' AND state <> 'idle' AND pid <> pg_backend_pid()")
    copying = row.n
  }
  t.equal(copying, 0, 'no connection left in a COPY')
  t.equal(app.db.faults().connections_lost, lostBefore, 'readers that went away count as no lost connection')
  const again = await Promise.all(Array.from({ length: 12 }, async () => await download(url)))
  t.ok(again.every(a => a.status === 200 && a.bytes.equals(bytes)), 'twelve more downloads at once, byte-equal')

  // Readers that stop reading hold their COPY's connection: more of them than the pool has connections leave the other requests served.
  const stalled = await Promise.all(Array.from({ length: 15 }, async () => await new Promise<() => void>((resolve, reject) => {
    const request = get(url, res => { res.once('data', () => { res.pause(); resolve(() => request.destroy()) }) })
    request.on('error', err => { if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err) })
  })))
  const served = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await call('GET', i % 2 === 0 ? '/big' : '/@search?portal_type=File')).statusCode))
  t.same(new Set(served), new Set([200]), 'twenty reads answered while fifteen readers stall')
  stalled.forEach(leave => { leave() })
})
