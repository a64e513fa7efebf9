import sharp from 'sharp'
import t from 'tap'
import { build } from '../helper.js'

/**
 * Plone 6's image scales (core/content/image/scales.ts): every image field is
 * served with `scales`, each made on first request by sharp, kept for every
 * process, of the size its box says (decoded here to check), never larger
 * than the original, and cacheable for ever under its versioned name.
 */
async function picture (width: number, height: number, format: 'png' | 'jpeg' | 'webp' | 'gif'): Promise<Buffer> {
  return await sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } }).toFormat(format).toBuffer()
}
const upload = (bytes: Buffer, filename: string): Record<string, string> => ({ data: bytes.toString('base64'), encoding: 'base64', filename })

/** Plone 6's scales of a 1000 × 600 image, worked out by hand from its allowed sizes (name: box). */
const OF_1000_BY_600: Record<string, [number, number]> = {
  huge: [1000, 600], // 1600:65536, not enlarged
  great: [1000, 600], // 1200:65536
  larger: [1000, 600], // 1000:65536
  large: [800, 480], // 800:65536
  teaser: [600, 360],
  preview: [400, 240],
  mini: [200, 120],
  thumb: [128, 77], // 128:128, the width binds: 600 × 0.128 = 76.8
  tile: [64, 38], // 38.4
  icon: [32, 19], // 19.2
  listing: [16, 10] // 9.6
}

t.test('image scales', async t => {
  const { app, call, inject, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const get = async (url: string, token?: string): Promise<{ status: number, type: unknown, cache: unknown, bytes: Buffer }> => {
    const res = await inject({ method: 'GET', url: new URL(url, 'http://localhost:80').pathname, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
    return { status: res.statusCode, type: res.headers['content-type'], cache: res.headers['cache-control'], bytes: res.rawPayload }
  }
  const original = await picture(1000, 600, 'png')
  const created = await call('POST', '/', { '@type': 'Image', id: 'harbour', title: 'Harbour', image: upload(original, 'harbour.png') }, admin)
  t.equal(created.statusCode, 201, created.body)
  t.equal((await call('POST', '/harbour/@workflow/publish', {}, admin)).statusCode, 200)
  const image = (await call('GET', '/harbour')).json().image

  t.test('each scale of the serialization has the size Plone gives it, and its bytes are that size', async t => {
    t.same(Object.keys(image.scales).sort(), Object.keys(OF_1000_BY_600).sort())
    t.match(image.download, /^http:\/\/localhost:80\/harbour\/@@images\/image-1000-[0-9a-f]{16}\.png$/)
    for (const [name, [width, height]] of Object.entries(OF_1000_BY_600)) {
      const scale = image.scales[name]
      t.same([scale.width, scale.height], [width, height], name)
      t.match(scale.download, new RegExp(`/@@images/image-${width}-[0-9a-f]{16}\\.png$`), name)
      const served = await get(scale.download)
      t.equal(served.status, 200, name)
      t.equal(served.type, 'image/png', name)
      t.equal(served.cache, 'public, max-age=31536000, immutable', `${name}: a versioned name is kept for ever`)
      const decoded = await sharp(served.bytes).metadata()
      t.same([decoded.format, decoded.width, decoded.height], ['png', width, height], `${name} decodes to its size`)
      if (width === 1000) t.ok(served.bytes.equals(original), `${name}: the original itself`)
    }
  })

  t.test('by name, the original and a scale; kept once for every process', async t => {
    const named = await get('/harbour/@@images/image/preview')
    t.equal(named.status, 200)
    t.not(named.cache, 'public, max-age=31536000, immutable', 'a name without the version is not kept for ever')
    t.ok(named.bytes.equals((await get(image.scales.preview.download)).bytes), 'the same bytes as the versioned name')
    t.ok((await get('/harbour/@@images/image')).bytes.equals(original))
    const { rows } = await app.db.query<{ scale: string, bytes: Buffer }>("SELECT scale, bytes FROM image_scales s JOIN content c USING (uid) WHERE c.path = '/harbour' ORDER BY scale")
    t.same(rows.map(r => r.scale), ['icon', 'large', 'listing', 'mini', 'preview', 'teaser', 'thumb', 'tile'], 'the scales smaller than the original were made and kept; the others are the original')
    t.ok(rows.find(r => r.scale === 'preview')!.bytes.equals(named.bytes))
  })

  t.test('a crowd asking a new scale at once gets it, made once', async t => {
    const other = await call('POST', '/', { '@type': 'Image', id: 'crowd', title: 'Crowd', image: upload(await picture(640, 480, 'jpeg'), 'crowd.jpg') }, admin)
    t.equal(other.statusCode, 201)
    const teaser = other.json().image.scales.teaser
    const answers = await Promise.all(Array.from({ length: 12 }, async () => await get(teaser.download, admin)))
    t.ok(answers.every(a => a.status === 200 && a.type === 'image/jpeg' && a.bytes.equals(answers[0].bytes)))
    t.equal(answers[0].cache, 'private, no-store', 'what a logged-in caller gets is never stored by a shared cache')
    t.same((await app.db.query("SELECT count(*)::int AS n FROM image_scales s JOIN content c USING (uid) WHERE c.path = '/crowd'")).rows[0].n, 1)
  })

  t.test('an edit or a transition keeps the names a page wrote (they follow the bytes, not the object)', async t => {
    const before = (await call('GET', '/harbour')).json().image
    t.notOk('digest' in before, 'what names the bytes is not served')
    t.equal((await call('PATCH', '/harbour', { title: 'Harbour at dawn' }, admin)).statusCode, 204)
    t.equal((await call('POST', '/harbour/@workflow/retract', {}, admin)).statusCode, 200)
    t.equal((await call('POST', '/harbour/@workflow/publish', {}, admin)).statusCode, 200)
    const after = (await call('GET', '/harbour')).json().image
    t.same(after, before, 'the same names after an edit, a retraction and a publication')
    t.equal((await get(before.scales.teaser.download)).status, 200, 'a name written before them still serves its scale')
    const found = (await call('GET', '/@search?portal_type=Image&getId=harbour&metadata_fields=image_scales')).json()
    t.equal(`http://localhost:80/harbour/${found.items[0].image_scales.image[0].download}`, before.download, 'the catalogue names the same version')
  })

  t.test('a new upload: new names, new scales; the old names name nothing', async t => {
    const before = (await call('GET', '/harbour', undefined, admin)).json().image
    const replaced = await picture(300, 500, 'webp')
    t.equal((await call('PATCH', '/harbour', { image: upload(replaced, 'tall.webp') }, admin)).statusCode, 204)
    const after = (await call('GET', '/harbour')).json().image
    t.equal((await get(before.scales.preview.download)).status, 404)
    t.equal((await get(before.download)).status, 404)
    t.same([after.scales.preview.width, after.scales.preview.height], [300, 500], 'not enlarged')
    t.same([after.scales.thumb.width, after.scales.thumb.height], [77, 128], 'the height binds a tall image')
    const thumb = await get(after.scales.thumb.download)
    const decoded = await sharp(thumb.bytes).metadata()
    t.same([thumb.type, decoded.format, decoded.width, decoded.height], ['image/webp', 'webp', 77, 128])
    const preview = await get('/harbour/@@images/image/preview')
    t.ok(preview.bytes.equals(replaced), 'a scale as large as the original is the original')
    const { rows } = await app.db.query<{ version: string }>("SELECT DISTINCT version FROM image_scales s JOIN content c USING (uid) WHERE c.path = '/harbour' AND s.scale = 'thumb'")
    t.equal(rows.length, 1, 'the kept thumb is the new version\'s, replacing the old one')
  })

  t.test('a name that names nothing is 404; a private image is not served to anonymous callers', async t => {
    const current = (await call('GET', '/harbour')).json().image
    const version = /-([0-9a-f]{16})\./.exec(current.download)![1]
    for (const name of ['image/nosuch', 'image/preview/more', 'title', 'title/preview', 'image-400-0000000000000000.webp', `image-401-${version}.webp`,
      `nosuch-300-${version}.webp`, 'image/../../etc/passwd', '__proto__', 'image/__proto__', 'constructor']) {
      t.equal((await get(`/harbour/@@images/${name}`)).status, 404, name)
    }
    t.equal((await call('POST', '/', { '@type': 'Image', id: 'private', title: 'Private', image: upload(await picture(50, 50, 'gif'), 'p.gif') }, admin)).statusCode, 201)
    const hidden = (await call('GET', '/private', undefined, admin)).json().image
    t.equal((await get(hidden.scales.icon.download)).status, 401)
    const icon = await get(hidden.scales.icon.download, admin)
    t.same([icon.status, icon.type, (await sharp(icon.bytes).metadata()).format], [200, 'image/gif', 'gif'])
  })
})
