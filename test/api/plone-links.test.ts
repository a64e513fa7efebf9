import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * Links inside blocks by UID (core/content/links.ts, plone.restapi's resolveuid
 * deserializers and serializers): kept as `../resolveuid/<uid>…`, served as
 * the target's URL to a reader who may view it, left by UID (naming no path)
 * to one who may not.
 */
t.test('links in blocks are kept by UID and served as URLs', async t => {
  const { app, call, tokenFor } = await build(t)
  const admin = await tokenFor('admin')
  const page = async (id: string, fields: Record<string, unknown> = {}, publish = true): Promise<string> => {
    const res = await call('POST', '/', { '@type': 'Document', id, title: id, ...fields }, admin)
    t.equal(res.statusCode, 201, res.body)
    if (publish) t.equal((await call('POST', `/${id}/@workflow/publish`, {}, admin)).statusCode, 200)
    return res.json().UID
  }
  const target = await page('target')
  const secret = await page('secret', {}, false)
  const link = (url: string): Record<string, unknown> => ({ type: 'link', data: { url }, children: [{ text: 'here' }] })
  const blocks = {
    teaser: { '@type': 'teaser', href: [{ '@id': '/target', title: 'Target' }], preview_image: '/target/@@images/image' },
    image: { '@type': 'image', url: 'http://localhost:80/target/@@images/image/preview' },
    text: { '@type': 'slate', value: [{ type: 'p', children: [{ text: 'See ' }, link('/target#part'), link('/secret'), link('https://plone.org/x'), link('/nowhere')] }], plaintext: 'See here' },
    grid: { '@type': 'gridBlock', blocks: { inner: { '@type': 'image', url: '/target' } } },
    listing: { '@type': 'listing', href: ['/secret/view', '//elsewhere.org/target'] }
  }
  await page('linker', { blocks, blocks_layout: { items: Object.keys(blocks) } })

  t.test('stored by UID, what follows the object kept', async t => {
    const { rows: [row] } = await app.db.query<{ data: { blocks: typeof blocks } }>("SELECT data FROM content WHERE path = '/linker'")
    const kept = row.data.blocks as any
    t.same(kept.teaser.href, [{ '@id': `../resolveuid/${target}`, title: 'Target' }])
    t.equal(kept.teaser.preview_image, `../resolveuid/${target}/@@images/image`)
    t.equal(kept.image.url, `../resolveuid/${target}/@@images/image/preview`)
    t.same(kept.text.value[0].children.slice(1).map((n: any) => n.data.url), [`../resolveuid/${target}#part`, `../resolveuid/${secret}`, 'https://plone.org/x', '/nowhere'])
    t.equal(kept.grid.blocks.inner.url, `../resolveuid/${target}`)
    t.same(kept.listing.href, [`../resolveuid/${secret}/view`, '//elsewhere.org/target'], 'a protocol-relative URL is not a path of the site')
    t.equal(kept.text.plaintext, 'See here', 'the rest of a block as sent')
  })

  t.test('served as URLs to whoever may view the target; by UID to others', async t => {
    const asAdmin = (await call('GET', '/linker', undefined, admin)).json().blocks
    t.same(asAdmin.teaser.href, [{ '@id': 'http://localhost:80/target', title: 'Target' }])
    t.equal(asAdmin.image.url, 'http://localhost:80/target/@@images/image/preview')
    t.same(asAdmin.text.value[0].children.slice(1).map((n: any) => n.data.url), ['http://localhost:80/target#part', 'http://localhost:80/secret', 'https://plone.org/x', '/nowhere'])
    t.equal(asAdmin.grid.blocks.inner.url, 'http://localhost:80/target')
    t.same(asAdmin.listing.href, ['http://localhost:80/secret/view', '//elsewhere.org/target'])

    const anonymous = await call('GET', '/linker')
    t.equal(anonymous.statusCode, 200)
    const asAnonymous = anonymous.json().blocks
    t.equal(asAnonymous.image.url, 'http://localhost:80/target/@@images/image/preview')
    t.equal(asAnonymous.text.value[0].children[2].data.url, `../resolveuid/${secret}`)
    t.same(asAnonymous.listing.href[0], `../resolveuid/${secret}/view`)
    t.notMatch(anonymous.body, /\/secret/, 'the private page\'s path appears nowhere in the answer')
  })

  t.test('what a reader got, sent back, is kept as it was', async t => {
    const before = (await app.db.query("SELECT data->'blocks' AS blocks FROM content WHERE path = '/linker'")).rows[0].blocks
    const read = (await call('GET', '/linker', undefined, admin)).json()
    t.equal((await call('PATCH', '/linker', { blocks: read.blocks }, admin)).statusCode, 204)
    const after = (await app.db.query("SELECT data->'blocks' AS blocks FROM content WHERE path = '/linker'")).rows[0].blocks
    t.same(after, before)
  })

  t.test('a search of full objects and the navigation root serve them too', async t => {
    const found = (await call('GET', '/@search?portal_type=Document&id=linker&fullobjects=1', undefined, admin)).json()
    t.equal(found.items[0].blocks.image.url, 'http://localhost:80/target/@@images/image/preview')
    t.equal((await call('PATCH', '/', { blocks: { a: { '@type': 'teaser', href: [{ '@id': '/target' }] } } }, admin)).statusCode, 204)
    t.same((await call('GET', '/', undefined, admin)).json().blocks.a.href, [{ '@id': 'http://localhost:80/target' }])
    const navroot = (await call('GET', '/linker?expand=navroot', undefined, admin)).json()['@components'].navroot.navroot
    t.same(navroot.blocks.a.href, [{ '@id': 'http://localhost:80/target' }])
  })

  t.test('links in rich text too: kept by UID, served as URLs to whoever may view the target', async t => {
    const details = '<p><a href="/target#top">target</a> <a href="/secret?a=1&amp;b=2">secret</a> <img src="/target/@@images/image/preview" alt="x" /> ' +
      '<a href="https://plone.org/">out</a> not a link: href="/target"</p>'
    const talk = await call('POST', '/talks', talkBody({ title: 'Linked talk', details: { data: details, 'content-type': 'text/html' } }), admin)
    t.equal(talk.statusCode, 201, talk.body)
    const path = new URL(talk.headers.location as string).pathname
    t.equal((await call('POST', `${path}/@workflow/publish`, {}, admin)).statusCode, 200)
    const { rows: [row] } = await app.db.query<{ html: string }>("SELECT data->'details'->>'data' AS html FROM content WHERE path = $1", [path])
    t.equal(row.html, `<p><a href="../resolveuid/${target}#top">target</a> <a href="../resolveuid/${secret}?a=1&amp;b=2">secret</a> <img src="../resolveuid/${target}/@@images/image/preview" alt="x" /> ` +
      '<a href="https://plone.org/">out</a> not a link: href="/target"</p>', 'kept by UID; text that reads like a link is text')
    const asAdmin = (await call('GET', path, undefined, admin)).json().details.data
    t.equal(asAdmin, '<p><a href="http://localhost:80/target#top">target</a> <a href="http://localhost:80/secret?a=1&amp;b=2">secret</a> <img src="http://localhost:80/target/@@images/image/preview" alt="x" /> ' +
      '<a href="https://plone.org/">out</a> not a link: href="/target"</p>')
    const anonymous = await call('GET', path)
    t.match(anonymous.json().details.data, `href="../resolveuid/${secret}?a=1&amp;b=2"`)
    t.notMatch(anonymous.body, /\/secret/, 'the private page\'s path appears nowhere')
    t.equal((await call('PATCH', path, { details: (await call('GET', path, undefined, admin)).json().details }, admin)).statusCode, 204)
    t.equal((await app.db.query<{ html: string }>("SELECT data->'details'->>'data' AS html FROM content WHERE path = $1", [path])).rows[0].html, row.html, 'sent back as read, kept as it was')
  })

  t.test('behind Zope\'s virtual hosting, links are read and served with the public address', async t => {
    const vh = '/VirtualHostBase/https/www.example.org:443/VirtualHostRoot'
    const res = await call('PATCH', `${vh}/linker`, { blocks: { a: { '@type': 'image', url: 'https://www.example.org/target' } } }, admin)
    t.equal(res.statusCode, 204, res.body)
    const { rows: [row] } = await app.db.query("SELECT data->'blocks'->'a'->>'url' AS url FROM content WHERE path = '/linker'")
    t.equal(row.url, `../resolveuid/${target}`)
    t.equal((await call('GET', `${vh}/linker`, undefined, admin)).json().blocks.a.url, 'https://www.example.org/target')
  })
})
