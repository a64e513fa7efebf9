import t from 'tap'
import { build, talkBody, type TestApp } from '../helper.js'

/**
 * `@workflow` (docs/api.md): the simple publication
 * workflow's GET shape, its four transitions and who may take them, the
 * history with comments, the catalogue following every change of state, and
 * the publishing date set on publication.
 */
const BASE = 'http://localhost:80'

interface Actors { owner: string, member: string, reviewer: string, editor: string, admin: string }

async function actorsOf ({ tokenFor }: TestApp): Promise<Actors> {
  return {
    owner: await tokenFor('olga'),
    member: await tokenFor('mia'),
    reviewer: await tokenFor('rex', ['Reviewer']),
    editor: await tokenFor('eddie', ['Editor']),
    admin: await tokenFor('admin')
  }
}

/** Creates a talk as `token` and returns its path. */
async function newTalk ({ call }: TestApp, token: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/talks', talkBody(overrides), token)
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`)
  return new URL(res.json()['@id']).pathname
}

const transitionIds = (body: { transitions: Array<{ '@id': string }> }): string[] =>
  body.transitions.map(tr => tr['@id'].split('/@workflow/')[1]).sort()

t.test('@workflow', async t => {
  const app = await build(t)
  const { call } = app
  const who = await actorsOf(app)
  const titles = ['Workflow talk', 'Rejected talk', 'Dated talk', 'Extra talk']
  const [talk, rejected, dated, extra] = await Promise.all(titles.map(async title => await newTalk(app, who.owner, { title })))
  const searchIds = async (query: string, token?: string): Promise<string[]> =>
    (await call('GET', `/@search?${query}`, undefined, token)).json().items.map((i: { '@id': string }) => new URL(i['@id']).pathname)

  await t.test('GET on a new talk: the shape, the initial history entry and the transitions per caller', async t => {
    const res = await call('GET', `${talk}/@workflow`, undefined, who.owner)
    t.equal(res.statusCode, 200)
    const body = res.json()
    t.same(Object.keys(body).sort(), ['@id', 'history', 'state', 'transitions'])
    t.equal(body['@id'], `${BASE}${talk}/@workflow`)
    t.same(body.state, { id: 'private', title: 'Private' })
    t.equal(body.history.length, 1)
    t.match(body.history[0], { action: null, actor: 'olga', comments: '', review_state: 'private', title: 'Private' })
    t.match(body.history[0].time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/, 'time is ISO 8601')
    t.same(body.transitions, [{ '@id': `${BASE}${talk}/@workflow/submit`, title: 'Submit for publication' }], 'the owner may only submit')
    const of = async (token: string): Promise<string[]> => transitionIds((await call('GET', `${talk}/@workflow`, undefined, token)).json())
    t.same(await of(who.admin), ['publish', 'submit'], 'a Manager may submit and publish')
    t.same(await of(who.editor), ['submit'], 'an Editor may submit, not publish')
    t.equal((await call('GET', `${talk}/@workflow`, undefined, who.member)).statusCode, 403, 'a member may not view a private talk')
    t.equal((await call('GET', `${talk}/@workflow`)).statusCode, 401, 'nor may anonymous')
  })

  await t.test('submit (owner) → pending, with the comment in the history; the catalogue follows', async t => {
    t.same(await searchIds('review_state=pending', who.admin), [], 'nothing pending yet')
    const res = await call('POST', `${talk}/@workflow/submit`, { comment: 'Please review' }, who.owner)
    t.equal(res.statusCode, 200, res.body)
    const entry = res.json()
    t.match(entry, { action: 'submit', actor: 'olga', comments: 'Please review', review_state: 'pending', title: 'Pending review' })
    t.same(Object.keys(entry).sort(), ['action', 'actor', 'comments', 'review_state', 'time', 'title'])
    const wf = (await call('GET', `${talk}/@workflow`, undefined, who.owner)).json()
    t.same(wf.state, { id: 'pending', title: 'Pending review' })
    t.same(wf.history.map((h: { action: string | null }) => h.action), [null, 'submit'])
    t.same(wf.history[1], entry, 'the history ends with the entry the POST returned')
    t.same(await searchIds('review_state=pending', who.admin), [talk], 'the catalogue has the new state')
    t.same(await searchIds('SearchableText=workflow', who.reviewer), [talk], 'a reviewer now finds it')
    t.same(transitionIds(wf), ['retract'], 'the owner may now only retract')
    t.same(transitionIds((await call('GET', `${talk}/@workflow`, undefined, who.reviewer)).json()), ['publish', 'reject'])
  })

  await t.test('a transition not available to the caller → 400 WorkflowException, nothing changes', async t => {
    const cases: Array<[string, string, string | undefined]> = [
      ['publish', 'the owner publishes', who.owner],
      ['submit', 'a reviewer submits an already pending talk', who.reviewer],
      ['retract', 'a reviewer retracts', who.reviewer],
      ['no-such-transition', 'an unknown transition', who.admin]
    ]
    for (const [transition, why, token] of cases) {
      const res = await call('POST', `${talk}/@workflow/${transition}`, {}, token)
      t.equal(res.statusCode, 400, why)
      t.equal(res.json().type, 'WorkflowException', why)
      t.match(res.json().message, transition, `${why}: the message names the transition`)
    }
    t.equal((await call('POST', `${talk}/@workflow/publish`, {}, who.member)).statusCode, 403, 'a member cannot even view the pending talk')
    t.equal((await call('POST', `${talk}/@workflow/publish`, {})).statusCode, 401, 'anonymous must log in')
    const missing = await call('POST', `${talk}/@workflow`, {}, who.admin)
    t.equal(missing.statusCode, 400)
    t.same(missing.json(), { type: 'BadRequest', message: 'Missing transition' }, 'no transition name (plone.restapi)')
    t.equal((await call('POST', `${talk}/@workflow/publish/extra`, {}, who.admin)).statusCode, 404, 'extra path segments')
    t.same((await call('GET', `${talk}/@workflow`, undefined, who.owner)).json().state.id, 'pending', 'still pending')
  })

  await t.test('publish (reviewer) → published, effective set once; everyone sees it', async t => {
    t.equal((await call('GET', talk, undefined, who.owner)).json().effective, null, 'no publishing date before publication')
    t.same(await searchIds('SearchableText=workflow'), [], 'anonymous does not find it before')
    const before = Date.now()
    const res = await call('POST', `${talk}/@workflow/publish`, { comment: 'Accepted' }, who.reviewer)
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { action: 'publish', actor: 'rex', comments: 'Accepted', review_state: 'published', title: 'Published' })
    const effective = Date.parse((await call('GET', talk)).json().effective)
    t.ok(effective >= Math.floor(before / 1000) * 1000 && effective <= Date.now(), 'effective is the time of publication')
    t.same(await searchIds('SearchableText=workflow'), [talk], 'anonymous finds it now')
    t.same(await searchIds(`effective.query=${new Date(before - 1000).toISOString()}&effective.range=min&portal_type=talk`), [talk], 'effective is indexed')
    const wf = (await call('GET', `${talk}/@workflow`)).json()
    t.same(wf.state, { id: 'published', title: 'Published' })
    t.same(wf.history, [], 'anonymous does not see the history (Plone: review_history needs Request review)')
    t.same(wf.transitions, [], 'nor any transition')
    t.same(transitionIds((await call('GET', `${talk}/@workflow`, undefined, who.member)).json()), [], 'a member may take none')
    t.same(transitionIds((await call('GET', `${talk}/@workflow`, undefined, who.owner)).json()), ['retract'])
    const notForMember = await call('POST', `${talk}/@workflow/retract`, {}, who.member)
    t.equal(notForMember.statusCode, 400, 'a member who can view a published talk may not retract it')
    t.equal(notForMember.json().type, 'WorkflowException')
  })

  await t.test('retract (owner) → private; the catalogue hides it again; effective stays', async t => {
    const effective = (await call('GET', talk)).json().effective
    const res = await call('POST', `${talk}/@workflow/retract`, undefined, who.owner)
    t.equal(res.statusCode, 200, 'no body at all is fine')
    t.match(res.json(), { action: 'retract', actor: 'olga', comments: '', review_state: 'private', title: 'Private' })
    t.same(await searchIds('SearchableText=workflow'), [], 'anonymous no longer finds it')
    t.equal((await call('GET', talk)).statusCode, 401, 'nor reads it')
    t.equal((await call('GET', talk, undefined, who.owner)).json().effective, effective, 'a second transition keeps the publishing date')
    const history = (await call('GET', `${talk}/@workflow`, undefined, who.owner)).json().history
    t.same(history.map((h: { action: string | null, comments: string }) => [h.action, h.comments]),
      [[null, ''], ['submit', 'Please review'], ['publish', 'Accepted'], ['retract', '']], 'every comment is kept in order')
  })

  await t.test('reject (reviewer) → private', async t => {
    t.equal((await call('POST', `${rejected}/@workflow/submit`, {}, who.owner)).statusCode, 200)
    const res = await call('POST', `${rejected}/@workflow/reject`, { comment: 'Out of scope' }, who.reviewer)
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), { action: 'reject', actor: 'rex', comments: 'Out of scope', review_state: 'private', title: 'Private' })
    t.same(await searchIds('review_state=private&SearchableText=rejected', who.owner), [rejected])
    t.equal((await call('GET', rejected, undefined, who.reviewer)).statusCode, 403, 'back to private: the reviewer no longer sees it')
    t.equal((await call('POST', `${rejected}/@workflow/publish`, {}, who.reviewer)).statusCode, 403, 'nor can publish it')
  })

  await t.test('publishing dates given with the transition', async t => {
    const future = new Date(Date.now() + 86_400_000).toISOString()
    const res = await call('POST', `${dated}/@workflow/publish`, { effective: future }, who.admin)
    t.equal(res.statusCode, 200, res.body)
    t.equal(Date.parse((await call('GET', dated)).json().effective), Date.parse(future.replace(/\.\d+Z$/, 'Z')), 'the given date, not now')
    t.same(await searchIds('SearchableText=dated'), [], 'not yet effective: hidden from anonymous searches')
    t.same(await searchIds('SearchableText=dated', who.admin), [dated], 'a Manager sees it')
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ effective: 'tomorrow' }, 'an unparsable date'],
      [{ effective: '2026-01-02T00:00:00Z', expires: '2026-01-01T00:00:00Z' }, 'expires before effective'],
      [{ comment: 42 }, 'a comment that is not a string'],
      [{ include_everything: true }, 'an unknown key']
    ]
    for (const [body, why] of bad) {
      const refused = await call('POST', `${extra}/@workflow/publish`, body, who.admin)
      t.equal(refused.statusCode, 400, why)
      t.equal(refused.json().type, 'BadRequest', why)
    }
    t.equal((await call('GET', `${extra}/@workflow`, undefined, who.admin)).json().state.id, 'private', 'refused transitions change nothing')
  })
})
