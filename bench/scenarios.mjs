/**
 * What the benchmark measures. Each entry is one scenario: run.mjs reads its
 * description, the load generator (load.mjs) builds its requests with
 * `plan(ctx)`. `ctx` carries what the run prepared: tokens (admin, member),
 * the member's login, paths of published talks, the bulk size, a job number.
 *
 * Fields: `target` (service, floor, `solr`: the search server itself,
 * `async`: the service started with SOLR_ASYNC=true for the asynchronous
 * scenarios, `unversioned`: the service started with VERSIONS_KEPT=0, both
 * measured at the largest size after the levels, or `crowd`: below), `floor` (the floor a scenario's ratio is taken to:
 * `floor-db` unless named), `group` (floor, read, search, write,
 * mix, job), `scaled` (run again at every size of the scaling profile), `amount`
 * (a job of a fixed number of requests instead of a fixed duration),
 * `requestsPerItem` (requests per reported item, for jobs whose unit is not a
 * request), `settings` (Solr control-panel values the run sets before it:
 * Solr is switched on only for the scenarios that measure it, so that the
 * catalogue's figures are the catalogue's).
 * Most scenarios ask one request again and again (or a few in rotation):
 * "one request repeated" in the report. Those with `traffic: 'varied'` have
 * no plan: a crowd of clients draws every request from the mix of
 * bench/traffic-mix.mjs (`mix`: the ids of its classes, all of them unless
 * named), against the `crowd` target: two processes of the service on the
 * same database (bench/crowd.mjs); `engine` is the search engine every
 * search of theirs must be answered by; with `pace`, requests arrive at that
 * share of the level's floor rate instead of from clients that send again as
 * soon as they are answered.
 * A plan gives autocannon's `requests` and may give `check(body, headers)`,
 * which judges the first answer before anything is measured (null = fine),
 * and `background`: requests that other clients keep sending while the
 * scenario is measured (their answers are counted, not measured), or a list
 * of such, sent side by side.
 *
 * `needs` names what run.mjs makes through the API before the scenario, once
 * a run, and adds to `ctx` under that name (bench/media.mjs): `images`,
 * published Images of varied sizes with their scales' names, `pages`, the
 * folder pages are created in, and `localReader`, the token of a Member made
 * Reader of /talks on its sharing page. `prime(ctx)` gives paths that run.mjs GETs once
 * before the scenario, unmeasured (what a scenario of kept answers needs kept).
 *
 * Reindexing into Solr, the raw ingest into the search server, the drain
 * of the asynchronous queue and the 100 MB download are jobs that run.mjs
 * times itself (no load generator): see `JOBS` there.
 */
import { NUMBER, hostileWrites } from './hostile.mjs'
import { PAGE_BLOCKS, pageBody } from './pages.mjs'
import { COMMON_SUBJECT, FIRST_DAY, FULL_TEXT_QUERIES, WORD_IN_EVERY_TALK, WORD_IN_TENTH_OF_TALKS, talkBody } from './talks.mjs'

const JSON_HEADERS = { accept: 'application/json', 'content-type': 'application/json' }
const auth = token => ({ authorization: `Bearer ${token}` })

/** A request that walks through `paths`, one per request, across all connections. */
function rotating (method, paths, headers = {}) {
  let next = 0
  return {
    method,
    headers: { accept: 'application/json', ...headers },
    setupRequest: request => ({ ...request, path: paths[next++ % paths.length] })
  }
}

/** A folder listing's first or later page, full: 25 items. */
const aFullPage = body => body.items?.length === 25 ? null : `listed ${body.items?.length} items, not 25`

/** PATCHes of the talks' descriptions, one talk after the other, as the admin. */
function patchTalks (ctx, label) {
  let n = 0
  return {
    method: 'PATCH',
    headers: { ...JSON_HEADERS, ...auth(ctx.tokens.admin) },
    setupRequest: request => ({ ...request, path: ctx.talks[n % ctx.talks.length], body: JSON.stringify({ description: `${label} ${ctx.job}-${n++}` }) })
  }
}

/** A POST of a new, unique talk to /talks. */
function createTalk (ctx, token) {
  let n = 0
  return {
    method: 'POST',
    path: '/talks',
    headers: { ...JSON_HEADERS, ...auth(token) },
    setupRequest: request => ({ ...request, body: JSON.stringify(talkBody(1_000_000 * ctx.job + n, `new ${ctx.job}-${n++}`)) })
  }
}

const expectType = type => body => body['@type'] === type ? null : `answered @type ${body['@type']}, not ${type}`
/** POSTs of pages of blocks to `path`, a new page each (its text drawn for the job and its count, bench/pages.mjs). */
function pagePosts (ctx, path, headers) {
  let n = 0
  return {
    method: 'POST',
    path,
    headers: { ...JSON_HEADERS, ...headers },
    setupRequest: request => ({ ...request, body: JSON.stringify(pageBody(1_000_000 * ctx.job + n, `page ${ctx.job}-${n++}`)) })
  }
}
const CATALOGUE = { active: false }

/** The whole mix of bench/traffic-mix.mjs from the crowd, searches answered by the catalogue. */
const WHOLE_MIX = { group: 'mix', traffic: 'varied', target: 'crowd', scaled: true, settings: CATALOGUE, engine: 'catalogue' }

/** Talks per request of the bulk import (POST /talks/@import). */
const IMPORT_BATCH = 100
const SOLR_IMMEDIATE = { active: true, auto_commit: true, commit_within: 0 }
const SOLR_BATCHED = { active: true, auto_commit: false, commit_within: 1000 }

/**
 * The full-text queries, answered by `engine` (X-Search-Engine): a fallback
 * to the catalogue must never be measured as Solr, nor Solr as the catalogue.
 */
const fullText = (id, title, settings, engine, queries = FULL_TEXT_QUERIES, floor = undefined) => ({
  id,
  title,
  group: 'search',
  scaled: true,
  settings,
  ...(floor !== undefined ? { floor } : {}),
  plan: () => ({
    requests: [rotating('GET', queries.map(q => `/@search?SearchableText=${encodeURIComponent(q)}`))],
    check: (body, headers) => headers['x-search-engine'] !== engine
      ? `answered from ${headers['x-search-engine']} (${headers['x-search-fallback'] ?? ''})`
      : body.items_total > 0 ? null : 'found nothing'
  })
})

/**
 * A catalogue search that clients page through: 25 items a page, answered
 * by the catalogue (Solr is off for it) and finding at least a page.
 */
const fieldSearch = (id, title, query) => ({
  id,
  title,
  group: 'search',
  scaled: true,
  settings: CATALOGUE,
  plan: () => ({
    requests: [{ method: 'GET', path: `/@search?${query}`, headers: { accept: 'application/json' } }],
    check: (body, headers) => headers['x-search-engine'] !== 'catalogue'
      ? `answered from ${headers['x-search-engine']}`
      : body.items?.length === 25 ? null : `found ${body.items?.length} items, not 25`
  })
})

/**
 * Pages of the folder that `get-folder-pages` cycles through: 450 pages of 25
 * starting at every position, more than the catalogue would keep as pages
 * (10 000 rows), 475 distinct rows in 10 windows of 50 (the catalogue keeps
 * rows in windows: core/catalog/kept-results.ts); offsets stay shallow (a page
 * at offset n reads n rows more).
 */
const FOLDER_OFFSETS = 450

/** Newest first, as the clients of this service list talks. */
const BY_DATE = 'sort_on=Date&sort_order=descending'

/** A create with Solr in this configuration (`target` async: the SOLR_ASYNC service). */
const createWithSolr = (id, title, settings, target) => ({
  id,
  title,
  group: 'write',
  settings,
  ...(target !== undefined ? { target } : {}),
  plan: ctx => ({ requests: [createTalk(ctx, ctx.tokens.member)], check: expectType('talk') })
})

/** Every scale of every image, image after image: each (image, scale) once. */
const everyScale = images => images.flatMap(image => Object.entries(image.scales).map(([name, scale]) => ({ image, name, scale })))

/**
 * A job that asks each scale of `ctx.images` once, by `path(image, name,
 * scale)`: the check request is the first, the job the rest (`amount`), so
 * that no scale is asked twice.
 */
const eachScaleOnce = path => ({
  amount: ctx => everyScale(ctx.images).length - 1,
  plan: ctx => ({
    requests: [rotating('GET', everyScale(ctx.images).map(({ image, name, scale }) => path(image, name, scale)))],
    check: (body, headers) => headers['content-type'] === 'image/jpeg' ? null : `answered ${headers['content-type']}, not a JPEG`
  })
})

/** The scales served again and again: those a listing and a teaser show (Volto's thumbnails, its teaser and image blocks). */
const KEPT_SCALES = ['thumb', 'mini', 'preview', 'teaser']
const keptScalePaths = ctx => ctx.images.flatMap(image => KEPT_SCALES.map(name => image.scales[name].download))

export const SCENARIOS = [
  {
    id: 'floor-db',
    title: 'floor: one talk row, pg',
    target: 'floor',
    group: 'floor',
    scaled: true,
    plan: ctx => ({
      requests: [rotating('GET', ctx.talks.map(p => `/row${p}`))],
      check: row => row.portal_type === 'talk' ? null : `answered a row of type ${row.portal_type}, not talk`
    })
  },
  {
    id: 'floor-static',
    title: 'floor: no database',
    target: 'floor',
    group: 'floor',
    plan: () => ({ requests: [{ method: 'GET', path: '/static' }] })
  },
  // Varied traffic first at each size: right after the seeding, before other scenarios add talks.
  {
    id: 'get-random-talk',
    title: 'GET a random talk of all N, anonymous (private ones: 401)',
    group: 'read',
    traffic: 'varied',
    target: 'crowd',
    scaled: true,
    mix: ['get-talk']
  },
  {
    id: 'varied-traffic',
    title: 'the whole mix: reads, searches and writes, anonymous and logged in',
    ...WHOLE_MIX
  },
  // The same mix arriving as a crowd does, at a stated rate (bench/crowd.mjs, "Paced"): latencies below saturation.
  {
    id: 'varied-traffic-paced-10',
    title: 'the whole mix arriving at 10 % of the floor\'s rate (paced, open loop)',
    ...WHOLE_MIX,
    pace: 0.1
  },
  {
    id: 'varied-traffic-paced-25',
    title: 'the whole mix arriving at 25 % of the floor\'s rate (paced, open loop)',
    ...WHOLE_MIX,
    pace: 0.25
  },
  {
    id: 'get-talk-anon',
    title: 'GET one talk, anonymous',
    group: 'read',
    scaled: true,
    plan: ctx => ({ requests: [rotating('GET', ctx.talks)], check: expectType('talk') })
  },
  {
    id: 'get-talk-auth',
    title: 'GET one talk, authenticated',
    group: 'read',
    scaled: true,
    plan: ctx => ({ requests: [rotating('GET', ctx.talks, auth(ctx.tokens.member))], check: expectType('talk') })
  },
  {
    // Issue 25: local roles count in every permission check; a reader's GET reads the roles of the talk's lineage.
    id: 'get-talk-local-roles',
    title: 'GET one talk, as a user who is Reader of /talks by @sharing (a local role)',
    group: 'read',
    scaled: true,
    needs: ['localReader'],
    plan: ctx => ({ requests: [rotating('GET', ctx.talks, auth(ctx.localReader))], check: expectType('talk') })
  },
  {
    id: 'get-folder',
    title: 'GET /talks (25 items)',
    group: 'read',
    scaled: true,
    plan: () => ({
      requests: [{ method: 'GET', path: '/talks', headers: { accept: 'application/json' } }],
      check: aFullPage
    })
  },
  {
    // The other listings ask the same page again and again, which the catalogue keeps (core/catalog/kept-results.ts)
    // until the next write. This one pages: every page starting at every position, in a cycle. Kept as pages, they
    // were more than the catalogue keeps, and each was read again from PostgreSQL (17 % of the floor); the catalogue
    // keeps rows in windows of 50, so the pages that overlap share them. Pages read right after a write: get-folder-editing.
    id: 'get-folder-pages',
    title: `GET /talks (25 items), b_start rotating over the first ${FOLDER_OFFSETS} positions`,
    group: 'read',
    scaled: true,
    plan: () => ({
      requests: [rotating('GET', Array.from({ length: FOLDER_OFFSETS }, (_, i) => `/talks?b_start=${i}`))],
      check: aFullPage
    })
  },
  fieldSearch('search-date-asc', '@search portal_type, sort_on=Date', 'portal_type=talk&sort_on=Date'),
  fieldSearch('search-date-desc', '@search portal_type, sort_on=Date descending', `portal_type=talk&${BY_DATE}`),
  fieldSearch('search-review-state', '@search review_state, by Date', `review_state=published&${BY_DATE}`),
  fieldSearch('search-subject', `@search Subject=${COMMON_SUBJECT}, by Date`, `Subject=${COMMON_SUBJECT}&${BY_DATE}`),
  fieldSearch('search-path-depth', '@search path=/talks, depth 1, by Date', `path=/talks&path.depth=1&${BY_DATE}`),
  fieldSearch('search-date-range', '@search start in the first day, by start',
    `start.query=${FIRST_DAY[0]}&start.query=${FIRST_DAY[1]}&start.range=min:max&sort_on=start`),
  fullText('search-fulltext', '@search full text, catalogue (mixed)', CATALOGUE, 'catalogue'),
  fullText('fulltext-catalogue-all', '@search full text, catalogue, a word in every talk', CATALOGUE, 'catalogue', [WORD_IN_EVERY_TALK]),
  fullText('fulltext-catalogue-10pct', '@search full text, catalogue, a word in 10 % of talks', CATALOGUE, 'catalogue', [WORD_IN_TENTH_OF_TALKS]),
  fullText('fulltext-solr', '@search full text, Solr', SOLR_IMMEDIATE, 'solr', FULL_TEXT_QUERIES, 'floor-solr-query'),
  {
    id: 'floor-solr-query',
    title: 'floor: the service\'s full-text selects, straight to the search server',
    target: 'solr',
    group: 'floor',
    scaled: true,
    plan: ctx => ({
      requests: [rotating('GET', ctx.solrSelects)],
      check: body => body.response?.numFound > 0 ? null : 'found nothing'
    })
  },
  {
    id: 'create',
    title: 'POST create, no Solr',
    group: 'write',
    scaled: true,
    settings: CATALOGUE,
    plan: ctx => ({ requests: [createTalk(ctx, ctx.tokens.member)], check: expectType('talk') })
  },
  createWithSolr('create-solr-immediate', 'POST create, Solr sync immediate', SOLR_IMMEDIATE),
  createWithSolr('create-solr-batched', 'POST create, Solr sync batched (commitWithin 1 s)', SOLR_BATCHED),
  createWithSolr('create-solr-async', 'POST create, Solr async (queue; commitWithin 1 s)', SOLR_BATCHED, 'async'),
  {
    id: 'patch',
    title: 'PATCH one talk, no Solr',
    group: 'write',
    scaled: true,
    settings: CATALOGUE,
    plan: ctx => ({ requests: [patchTalks(ctx, 'Edited')] })
  },
  {
    id: 'patch-versions-off',
    title: 'PATCH one talk on a service that keeps no versions (VERSIONS_KEPT=0), no Solr: what PATCH, which keeps one, is compared with',
    target: 'unversioned',
    group: 'write',
    settings: CATALOGUE,
    plan: ctx => ({ requests: [patchTalks(ctx, 'Edited, no version kept')] })
  },
  {
    id: 'get-folder-editing',
    title: 'GET /talks (25 items) while an editor PATCHes talks (each write drops the pages kept)',
    group: 'read',
    scaled: true,
    settings: CATALOGUE,
    plan: ctx => ({
      requests: [rotating('GET', ['/talks'])],
      check: aFullPage,
      background: { connections: 1, requests: [patchTalks(ctx, 'Edited while listed')] }
    })
  },
  {
    id: 'login-flood',
    title: 'GET one talk while 20 clients post wrong passwords',
    group: 'read',
    scaled: true,
    plan: ctx => ({
      requests: [rotating('GET', ctx.talks)],
      check: expectType('talk'),
      background: {
        connections: 20,
        requests: [{ method: 'POST', path: '/@login', headers: JSON_HEADERS, body: JSON.stringify({ ...ctx.memberLogin, password: 'not-the-password' }) }]
      }
    })
  },
  {
    // The same GET as get-talk-anon, while Members send the largest writes the service accepts, each kind
    // from a client of its own (bench/hostile.mjs): none may hold the process so that the GET waits (docs/api.md,
    // "Bounded work per request"). Not scaled: the writes add talks (an import a thousand) to what later scenarios list.
    id: 'get-talk-hostile-writes',
    title: 'GET one talk while 4 Members send the largest accepted writes (rich text, nesting, @import, image)',
    group: 'read',
    floor: 'get-talk-anon',
    settings: CATALOGUE,
    plan: ctx => {
      let n = 0
      return {
        requests: [rotating('GET', ctx.talks)],
        check: expectType('talk'),
        // A client for each kind, so that all four run side by side the whole time (one client cycling through
        // them would spend the run in its imports).
        background: hostileWrites().map(({ path, template }) => ({
          connections: 1,
          requests: [{
            method: 'POST',
            path,
            headers: { ...JSON_HEADERS, ...auth(ctx.tokens.member) },
            setupRequest: request => ({ ...request, body: template.replaceAll(NUMBER, `${ctx.job}-${n++}`) })
          }]
        }))
      }
    }
  },
  {
    id: 'login',
    title: 'POST @login',
    group: 'write',
    plan: ctx => ({
      requests: [{ method: 'POST', path: '/@login', headers: JSON_HEADERS, body: JSON.stringify(ctx.memberLogin) }],
      check: body => typeof body.token === 'string' ? null : 'answered no token'
    })
  },
  {
    id: 'bulk-import',
    title: `bulk import: ${IMPORT_BATCH} talks a POST @import, each published, no Solr`,
    group: 'job',
    settings: CATALOGUE,
    unit: 'talks/s',
    // One request imports IMPORT_BATCH talks: the rate (requests / requestsPerItem / s) is talks/s.
    requestsPerItem: 1 / IMPORT_BATCH,
    // The profile's bulk size, but at least 20 requests (two a connection), so that the rate is not one round's latency.
    amount: ctx => Math.ceil(Math.max(ctx.bulkTalks, 20 * IMPORT_BATCH) / IMPORT_BATCH),
    plan: ctx => {
      let n = 0
      return {
        requests: [{
          method: 'POST',
          path: '/talks/@import',
          headers: { ...JSON_HEADERS, ...auth(ctx.tokens.admin) },
          setupRequest: request => {
            const items = Array.from({ length: IMPORT_BATCH }, () => ({ ...talkBody(1_000_000 * ctx.job + n, `import ${ctx.job}-${n++}`), transitions: ['publish'] }))
            return { ...request, body: JSON.stringify({ items }) }
          }
        }],
        check: body => body.items_total === IMPORT_BATCH && body.items.every(item => item['@type'] === 'talk' && item.review_state === 'published')
          ? null
          : `answered ${body.items_total} items, not ${IMPORT_BATCH} published talks`
      }
    }
  },
  // The media of issue 24, after the rest: the pages they create are not to be listed or searched by the scenarios above.
  {
    id: 'floor-scale',
    title: 'floor: the same scales made by sharp from the originals read with pg, kept nowhere',
    target: 'floor',
    group: 'floor',
    needs: ['images'],
    unit: 'scales/s',
    ...eachScaleOnce((image, name, scale) => `/scale/${image.uid}/${scale.width}/${scale.height}`)
  },
  {
    // Each request is a question not asked before: a scale is made at its first request (then kept, image_scales).
    id: 'image-scales-new',
    title: 'GET @@images/image/<scale>, first requests: every scale of N Images (1700–2999 px wide, varied shapes) asked once',
    group: 'job',
    floor: 'floor-scale',
    needs: ['images'],
    unit: 'scales/s',
    ...eachScaleOnce((image, name) => `${image.path}/@@images/image/${name}`)
  },
  {
    id: 'image-scale-kept',
    title: `GET a kept scale by its versioned name, repeated: ${KEPT_SCALES.join(', ')} of N Images in rotation, anonymous`,
    group: 'read',
    needs: ['images'],
    prime: keptScalePaths,
    plan: ctx => ({
      requests: [rotating('GET', keptScalePaths(ctx))],
      check: (body, headers) => headers['content-type'] !== 'image/jpeg'
        ? `answered ${headers['content-type']}, not a JPEG`
        : /immutable/.test(headers['cache-control'] ?? '') ? null : `answered cache-control ${headers['cache-control']}, not kept for ever`
    })
  },
  {
    id: 'floor-page-write',
    title: `floor: the same pages of ${PAGE_BLOCKS} blocks stored as JSON with their words' full-text vector, one statement with pg`,
    target: 'floor',
    group: 'floor',
    plan: ctx => ({ requests: [pagePosts(ctx, '/page', {})], check: expectType('Document') })
  },
  {
    id: 'create-page-blocks',
    title: `POST a page of ${PAGE_BLOCKS} blocks (a title and Slate paragraphs), new text each, no Solr`,
    group: 'write',
    floor: 'floor-page-write',
    needs: ['pages'],
    settings: CATALOGUE,
    plan: ctx => ({ requests: [pagePosts(ctx, ctx.pages, auth(ctx.tokens.admin))], check: expectType('Document') })
  }
]
