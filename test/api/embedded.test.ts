import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, talkBody } from '../helper.js'

/**
 * The same catalogue on the embedded PostgreSQL (PGlite): create, publish,
 * list, full text, and everything still there after a restart on the same
 * data directory.
 */
t.test('the embedded database', async t => {
  const dataDir = await mkdtemp(join(tmpdir(), 'cms-embedded-'))
  t.teardown(async () => { await rm(dataDir, { recursive: true, force: true }) })
  const titlesOf = (res: { json: () => any }): string[] => res.json().items.map((i: { title: string }) => i.title)

  await t.test('first life: create, publish, list, search', async t => {
    const { app, call, tokenFor } = await build(t, { embedded: true, dataDir })
    t.equal(app.db.kind, 'embedded')
    const owner = await tokenFor('olga')
    const reviewer = await tokenFor('rex', ['Reviewer'])
    for (const title of ['Straße und Müller', 'Drafts stay private']) {
      t.equal((await call('POST', '/talks', talkBody({ title, speaker: 'Zoë' }), owner)).statusCode, 201)
    }
    t.equal((await call('POST', '/talks/strasse-und-muller/@workflow/submit', { comment: 'ready' }, owner)).statusCode, 200)
    t.equal((await call('POST', '/talks/strasse-und-muller/@workflow/publish', {}, reviewer)).statusCode, 200)
    t.same(titlesOf(await call('GET', '/talks')), ['Straße und Müller'], 'anonymous lists the published talk only')
    t.same(titlesOf(await call('GET', '/talks', undefined, owner)), ['Straße und Müller', 'Drafts stay private'], 'the owner lists both')
    t.same(titlesOf(await call('GET', '/@search?SearchableText=MULLER')), ['Straße und Müller'], 'full text with folding')
    t.same(titlesOf(await call('GET', '/@search?SearchableText=strass*')), ['Straße und Müller'], 'a prefix')
    t.same(titlesOf(await call('GET', '/@search?SearchableText=drafts')), [], 'the private talk is not found by anonymous')
    t.same(titlesOf(await call('GET', '/@search?SearchableText=zoe&sort_on=sortable_title', undefined, owner)), ['Drafts stay private', 'Straße und Müller'])
    const facets = await call('GET', '/@search?portal_type=talk&facet=true', undefined, owner)
    t.same(facets.json().facets.review_state, { private: 1, published: 1 }, 'facets')
  })

  await t.test('second life on the same data directory', async t => {
    const { call, tokenFor } = await build(t, { embedded: true, dataDir })
    const owner = await tokenFor('olga')
    t.same(titlesOf(await call('GET', '/talks')), ['Straße und Müller'], 'the published talk is still listed')
    t.same(titlesOf(await call('GET', '/@search?SearchableText=muller')), ['Straße und Müller'], 'and found')
    t.same(titlesOf(await call('GET', '/@search?SearchableText=drafts', undefined, owner)), ['Drafts stay private'], 'the draft is still there for its owner')
    const history = (await call('GET', '/talks/strasse-und-muller/@workflow', undefined, owner)).json().history
    t.same(history.map((h: { action: string | null, comments: string }) => [h.action, h.comments]), [[null, ''], ['submit', 'ready'], ['publish', '']], 'the history survived')
    t.equal((await call('POST', '/talks/strasse-und-muller/@workflow/retract', {}, owner)).statusCode, 200, 'and the workflow goes on')
    t.same(titlesOf(await call('GET', '/@search?SearchableText=muller')), [], 'retracted: no longer found by anonymous')
  })
})
