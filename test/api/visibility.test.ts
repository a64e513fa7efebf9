import t from 'tap'
import { build, talkBody } from '../helper.js'

/**
 * Who sees a talk in each workflow state (docs/api.md), through every way of
 * reaching it: GET of the talk, the talks folder listing, and @search with and
 * without SearchableText. The table below is the specification; the loop
 * turns each of its cells into one assertion.
 */
const CALLERS = ['anonymous', 'member', 'owner', 'reviewer', 'editor', 'site administrator', 'manager'] as const
type Caller = typeof CALLERS[number]
type State = 'private' | 'pending' | 'published'

const MAY_VIEW: Record<State, readonly Caller[]> = {
  published: CALLERS,
  private: ['owner', 'editor', 'site administrator', 'manager'],
  pending: ['owner', 'editor', 'site administrator', 'manager', 'reviewer']
}

/** The global roles each caller logs in with; the owner is a Member who created the talks. */
const ROLES: Record<Exclude<Caller, 'anonymous'>, string[]> = {
  member: ['Member'],
  owner: ['Member'],
  reviewer: ['Reviewer'],
  editor: ['Editor'],
  'site administrator': ['Site Administrator'],
  manager: ['Manager']
}

/** The ways of reaching a talk; each returns whether the caller got it. */
const VIEWS = ['GET', 'listing', '@search', '@search SearchableText'] as const

t.test('visibility of talks by workflow state', async t => {
  const { call, tokenFor } = await build(t)
  const tokens = new Map<Caller, string | undefined>([['anonymous', undefined]])
  for (const [caller, roles] of Object.entries(ROLES)) tokens.set(caller as Caller, await tokenFor(caller.replace(' ', '-'), roles))

  // The owner creates one talk per state; the reviewer publishes one.
  const urls = {} as Record<State, string>
  for (const state of ['private', 'pending', 'published'] as const) {
    const created = await call('POST', '/talks', talkBody({ title: `Zanzibar ${state}` }), tokens.get('owner'))
    t.equal(created.statusCode, 201, created.body)
    urls[state] = created.json()['@id']
    const path = new URL(urls[state]).pathname
    if (state !== 'private') t.equal((await call('POST', `${path}/@workflow/submit`, {}, tokens.get('owner'))).statusCode, 200)
    if (state === 'published') t.equal((await call('POST', `${path}/@workflow/publish`, {}, tokens.get('reviewer'))).statusCode, 200)
  }

  for (const caller of CALLERS) {
    const token = tokens.get(caller)
    const idsOf = async (url: string): Promise<string[]> => {
      const res = await call('GET', url, undefined, token)
      t.equal(res.statusCode, 200, `${caller}: GET ${url}`)
      return res.json().items.map((i: { '@id': string }) => i['@id'])
    }
    const seen = {
      listing: await idsOf('/talks'),
      '@search': await idsOf('/@search?portal_type=talk'),
      '@search SearchableText': await idsOf('/@search?SearchableText=zanzibar')
    }
    for (const state of ['private', 'pending', 'published'] as const) {
      const allowed = MAY_VIEW[state].includes(caller)
      const get = await call('GET', new URL(urls[state]).pathname, undefined, token)
      for (const view of VIEWS) {
        const cell = `${caller} × ${state} × ${view}`
        if (view === 'GET') {
          const expected = allowed ? 200 : caller === 'anonymous' ? 401 : 403
          t.equal(get.statusCode, expected, `${cell} → ${expected}`)
        } else {
          t.equal(seen[view].includes(urls[state]), allowed, `${cell} → ${allowed ? 'listed' : 'not listed'}`)
        }
      }
    }
  }
})

/**
 * The effective/expiry filter (docs/search.md): published talks outside their
 * dates are left out of listings and searches, except for those who may
 * access inactive content: Manager and Site Administrator always, the Owner
 * for their own talks when asking with `show_inactive`. A GET by URL still
 * works (the View permission follows the workflow state only, as in Plone).
 */
const DATED = ['current', 'future', 'expired'] as const
type Dated = typeof DATED[number]
const SEES_INACTIVE: Record<'plain' | 'show_inactive', readonly Caller[]> = {
  plain: ['site administrator', 'manager'],
  show_inactive: ['owner', 'site administrator', 'manager']
}

t.test('talks outside their effective and expiry dates', async t => {
  const { call, tokenFor } = await build(t)
  const callers = ['anonymous', 'member', 'owner', 'site administrator', 'manager'] as const
  const tokens = new Map<Caller, string | undefined>([['anonymous', undefined]])
  for (const caller of callers.slice(1)) tokens.set(caller, await tokenFor(caller.replace(' ', '-'), ROLES[caller as Exclude<Caller, 'anonymous'>]))
  const day = 86_400_000
  const dates: Record<Dated, Record<string, string>> = {
    current: { effective: new Date(Date.now() - day).toISOString() },
    future: { effective: new Date(Date.now() + day).toISOString() },
    expired: { effective: new Date(Date.now() - 2 * day).toISOString(), expires: new Date(Date.now() - day).toISOString() }
  }
  const urls = {} as Record<Dated, string>
  for (const dated of DATED) {
    const created = await call('POST', '/talks', talkBody({ title: `Okapi ${dated}`, ...dates[dated] }), tokens.get('owner'))
    t.equal(created.statusCode, 201, created.body)
    urls[dated] = created.json()['@id']
    t.equal((await call('POST', `${new URL(urls[dated]).pathname}/@workflow/publish`, {}, tokens.get('manager'))).statusCode, 200)
  }

  for (const caller of callers) {
    const token = tokens.get(caller)
    const idsOf = async (url: string): Promise<string[]> =>
      (await call('GET', url, undefined, token)).json().items.map((i: { '@id': string }) => i['@id'])
    const seen: Record<string, string[]> = {
      listing: await idsOf('/talks'),
      '@search': await idsOf('/@search?SearchableText=okapi'),
      '@search show_inactive': await idsOf('/@search?SearchableText=okapi&show_inactive=true')
    }
    for (const dated of DATED) {
      t.equal((await call('GET', new URL(urls[dated]).pathname, undefined, token)).statusCode, 200, `${caller} × ${dated} × GET → 200`)
      for (const [view, ids] of Object.entries(seen)) {
        const visible = dated === 'current' || SEES_INACTIVE[view.endsWith('show_inactive') ? 'show_inactive' : 'plain'].includes(caller)
        t.equal(ids.includes(urls[dated]), visible, `${caller} × ${dated} × ${view} → ${visible ? 'listed' : 'not listed'}`)
      }
    }
  }
})
