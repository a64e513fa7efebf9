/**
 * The media of the benchmark (issue 24), made through the API by run.mjs
 * before the scenarios that need them (`needs` in scenarios.mjs), once a run:
 * Images of varied sizes, published, whose scales are asked for; a large
 * File, sent up by resumable upload and downloaded; the folders they and the pages of blocks go into. And
 * the client of the download, which counts a body's bytes and drops them.
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import sharp from 'sharp'
import { call } from './setup-calls.mjs'
import { seededRandom } from './talks.mjs'

/**
 * Widths from 1 700 to 2 999 pixels: all wider than the largest scale (huge,
 * 1 600), so that every scale asked for is made, never the original served
 * for it. Shapes of cameras and screens, landscape, square and portrait.
 */
const MIN_WIDTH = 1700
const WIDTH_SPAN = 1300
const SHAPES = [4 / 3, 3 / 2, 16 / 9, 1, 2 / 3, 3 / 4]
/** Images uploaded at once: each is generated, sent, published and read back. */
const AT_ONCE = 2

/**
 * The pixels of a photograph-like image: soft colour waves across and down,
 * and grain (a photograph's noise, which keeps its JPEG as large as a camera's:
 * about a megabyte for 4 megapixels), drawn for `seed`. In JavaScript: sharp's
 * own noise took a second an image.
 */
function pixels (width, height, seed) {
  const next = seededRandom(seed)
  const waves = length => Array.from({ length: 3 }, () => {
    const slow = (1 + next() * 6) * Math.PI / length
    const fast = (4 + next() * 20) * Math.PI / length
    const phase = next() * 6
    return Float32Array.from({ length }, (_, i) => 60 * Math.sin(i * slow + phase) + 15 * Math.sin(i * fast + 2 * phase))
  })
  const across = waves(width)
  const down = waves(height)
  // A prime length, so that the grain does not repeat in step with the rows.
  const grain = Int8Array.from({ length: 65521 }, () => Math.round((next() + next() + next() - 1.5) * 24))
  const data = Buffer.allocUnsafe(width * height * 3)
  let g = Math.floor(next() * grain.length)
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 3; c++, i++) {
        const value = 128 + across[c][x] + down[c][y] + grain[g]
        g = g === grain.length - 1 ? 0 : g + 1
        data[i] = value < 0 ? 0 : value > 255 ? 255 : value
      }
    }
  }
  return data
}

/** Image number `n`: a JPEG of its own size and shape. */
export async function photo (n) {
  const width = MIN_WIDTH + (n * 389) % WIDTH_SPAN
  const height = Math.round(width / SHAPES[n % SHAPES.length])
  const bytes = await sharp(pixels(width, height, n + 1), { raw: { width, height, channels: 3 } }).jpeg({ quality: 85 }).toBuffer()
  return { bytes, width, height }
}

/** A folder at the site's root, published: the scales and files in it are read anonymously, as a site's visitors read them. */
export async function newFolder (url, token, id) {
  await call(url, 'POST', '/', { '@type': 'folder', id, title: id }, token)
  await call(url, 'POST', `/${id}/@workflow/publish`, {}, token)
  return `/${id}`
}

/** An upload as plone.restapi takes it in a JSON body. */
const upload = (bytes, filename, contentType) => ({ data: bytes.toString('base64'), encoding: 'base64', filename, 'content-type': contentType })

/**
 * `count` Images in a published folder of their own, each published: what
 * each is as its serialization gives it, `{ path, uid, width, height, scales }`
 * with every scale's `download` as a path (its versioned name).
 */
export async function uploadImages (url, token, count) {
  const folder = await newFolder(url, token, 'bench-images')
  const images = new Array(count)
  let next = 0
  const worker = async () => {
    for (let n = next++; n < count; n = next++) {
      const { bytes, width, height } = await photo(n)
      const created = await call(url, 'POST', folder, { '@type': 'Image', title: `Photo ${n} (${width} × ${height})`, image: upload(bytes, `photo-${n}.jpg`, 'image/jpeg') }, token)
      const path = new URL(created['@id']).pathname
      await call(url, 'POST', `${path}/@workflow/publish`, {}, token)
      // Read after publishing, as a visitor reads it.
      const { image } = await call(url, 'GET', path, undefined, token)
      const scales = Object.fromEntries(Object.entries(image.scales).map(([name, scale]) => [name, { ...scale, download: new URL(scale.download).pathname }]))
      images[n] = { path, uid: created.UID, width, height, bytes: bytes.length, scales }
    }
  }
  await Promise.all(Array.from({ length: AT_ONCE }, worker))
  return images
}

/** What is sent of a large file: random MiBs (nothing to compress on the way) cycled, so that the sender holds and makes almost nothing. */
const SENT_CHUNKS = Array.from({ length: 8 }, () => randomBytes(2 ** 20))

/**
 * One request sending `bytes` of SENT_CHUNKS as its body, written as the
 * socket takes them: the status and headers of its answer.
 */
export function sendBytes (url, method, headers, bytes) {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers: { ...headers, 'content-length': String(bytes) } }, res => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }))
    })
    request.on('error', reject)
    const write = async () => {
      for (let sent = 0, n = 0; sent < bytes; n++) {
        const chunk = SENT_CHUNKS[n % SENT_CHUNKS.length].subarray(0, bytes - sent)
        sent += chunk.length
        if (!request.write(chunk)) await once(request, 'drain')
      }
      request.end()
    }
    write().catch(reject)
  })
}

/** The TUS headers of every request of an upload (plugins/routes/tus.ts). */
const tusHeaders = token => ({ 'tus-resumable': '1.0.0', authorization: `Bearer ${token}` })
const base64 = text => Buffer.from(text).toString('base64')

/**
 * A File of `bytes` bytes sent up as a client of plone.restapi's resumable
 * uploads sends it: opened with `@tus-upload` in a published folder of its
 * own, sent in PATCHes of `piece` bytes, then published. Its path and UID,
 * and the seconds from the opening to the last PATCH's answer.
 */
export async function tusUpload (url, token, bytes, piece) {
  const folder = await newFolder(url, token, 'bench-files')
  const started = performance.now()
  const opened = await sendBytes(`${url}${folder}/@tus-upload`, 'POST', {
    ...tusHeaders(token), 'upload-length': String(bytes), 'upload-metadata': `filename ${base64('large.bin')},content-type ${base64('application/octet-stream')}`
  }, 0)
  if (opened.status !== 201) throw new Error(`POST @tus-upload answered ${opened.status}`)
  let created
  for (let offset = 0; offset < bytes; offset += piece) {
    const length = Math.min(piece, bytes - offset)
    const sent = await sendBytes(opened.headers.location, 'PATCH', { ...tusHeaders(token), 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) }, length)
    if (sent.status !== 204 || Number(sent.headers['upload-offset']) !== offset + length) throw new Error(`PATCH at ${offset} answered ${sent.status}, offset ${sent.headers['upload-offset']}`)
    created = sent.headers.location
  }
  const seconds = (performance.now() - started) / 1000
  const path = new URL(created).pathname
  await call(url, 'POST', `${path}/@workflow/publish`, {}, token)
  const { UID } = await call(url, 'GET', path, undefined, token)
  return { path, uid: UID, seconds }
}

/** One GET of `url`, its body's bytes counted and dropped as they come: how many. */
function drained (url, agent) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent }, res => {
      if (res.statusCode !== 200) {
        res.resume()
        reject(new Error(`GET ${url} answered ${res.statusCode}`))
        return
      }
      let bytes = 0
      res.on('data', chunk => { bytes += chunk.length })
      res.on('end', () => resolve(bytes))
      res.on('error', reject)
    }).on('error', reject)
  })
}

/**
 * `times` GETs of `url` one after the other on one kept-alive connection, as
 * one client downloads: the bytes received and the seconds they took. Each
 * must be `expected` bytes long.
 */
export async function downloads (url, times, expected) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const started = performance.now()
    let bytes = 0
    for (let i = 0; i < times; i++) {
      const received = await drained(url, agent)
      if (received !== expected) throw new Error(`GET ${url} sent ${received} bytes, not ${expected}`)
      bytes += received
    }
    return { bytes, seconds: (performance.now() - started) / 1000 }
  } finally {
    agent.destroy()
  }
}
