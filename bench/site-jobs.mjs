/**
 * The jobs of site management (issue 25) that run.mjs times itself: a move
 * of a folder of 10,000 talks with Solr on, timed from the request to its
 * answer (which comes after the catalogue's set-based change and Solr's
 * delivery), and then Solr's drift, as `@solr-maintenance/sync?check=1`
 * counts it (zero is the only right answer). The moved folder is deleted
 * after it. Its talks come by POST @import (`importTalks`), as do those of
 * the bulk import a site's import is held against (issue 26).
 */
import { performance } from 'node:perf_hooks'
import { call, setUpFetch } from './setup-calls.mjs'
import { talkBody } from './talks.mjs'

/** Talks of the moved folder. */
export const MOVED_TALKS = 10_000
/** Talks a POST @import of `importTalks` sends. */
export const IMPORT_BATCH = 1000

/** The last line of a Solr maintenance operation (its result). */
async function maintenance (url, token, op) {
  const res = await setUpFetch(`${url}/@solr-maintenance/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
  const lines = (await res.text()).trim().split('\n')
  if (!res.ok) throw new Error(`@solr-maintenance/${op} answered ${res.status}: ${lines.at(-1)}`)
  return lines
}

/**
 * `talks` published talks into `folder` by POST @import, IMPORT_BATCH a
 * request, one request after the other (`label` and the talk's number make
 * its title, and so its id, unique). The next request's talks are made while
 * the service writes the last's.
 */
export async function importTalks (url, token, folder, talks, label) {
  const batch = at => ({ items: Array.from({ length: Math.min(IMPORT_BATCH, talks - at) }, (_, i) => ({ ...talkBody(at + i, `${label} ${at + i}`), transitions: ['publish'] })) })
  let next = batch(0)
  for (let at = 0; at < talks; at += IMPORT_BATCH) {
    const sent = call(url, 'POST', `${folder}/@import`, next, token)
    if (at + IMPORT_BATCH < talks) next = batch(at + IMPORT_BATCH)
    await sent
  }
}

/**
 * A folder of `talks` published talks (imported with Solr on, so that Solr
 * holds them), moved into another folder by one `@move`. Answers the move's
 * seconds, the objects it moved (the talks and their folder) and Solr's drift
 * after it (the sync check's line; `drifted`: whether it found any).
 */
export async function moveFolder (url, token, solrSettings, talks = MOVED_TALKS) {
  const stamp = Date.now().toString(36)
  await call(url, 'PATCH', '/@controlpanels/solr-controlpanel', solrSettings, token)
  // Solr brought in line with the catalogue first (the seeded talks were written without it): what drifts after is the move's.
  await maintenance(url, token, 'sync')
  await call(url, 'POST', '/', { '@type': 'folder', id: `moved-${stamp}`, title: 'A folder to move' }, token)
  await call(url, 'POST', '/', { '@type': 'folder', id: `archive-${stamp}`, title: 'Where it goes' }, token)
  await importTalks(url, token, `/moved-${stamp}`, talks, 'moved')
  const started = performance.now()
  await call(url, 'POST', `/archive-${stamp}/@move`, { source: `/moved-${stamp}` }, token)
  const seconds = (performance.now() - started) / 1000
  const check = await maintenance(url, token, 'sync?check=1')
  // The site as it was for what is measured after the job.
  await call(url, 'DELETE', `/archive-${stamp}`, undefined, token)
  return { seconds, objects: talks + 1, drift: check.filter(line => !/^sync: /.test(line)).join('; '), drifted: check.at(-1) === 'drift' }
}
