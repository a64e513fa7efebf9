import type { Db } from '../db/db.js'
import { aliasPathOrProblem, Redirects, type NewAlias } from '../content/redirects.js'
import type { ExchangeReport } from './report.js'

/** Redirects written a statement. */
const BATCH = 1000

/**
 * A path of `redirects.json` as a path of this site: plone.app.redirector
 * keeps physical paths (`/Plone/old-page`), which lose the exported site's
 * own path (`sitePath`, its root's `@id`); a path without it is taken as the
 * site's already (plone.exportimport's own examples write them so).
 */
function sitePathOf (path: string, sitePath: string): string {
  if (sitePath === '' || (path !== sitePath && !path.startsWith(`${sitePath}/`))) return path
  return path.slice(sitePath.length) || '/'
}

/** The path, checked as an alias's (core/content/redirects.ts), or null. */
function checked (path: string): string | null {
  const checked = aliasPathOrProblem(path)
  return typeof checked === 'string' ? checked : null
}

/**
 * Imports the redirects of an export (plone.app.redirector's storage, old
 * path → new path) after its content: each becomes an alias of the object at
 * its new path (not added by hand), so the old URL answers a redirect to
 * wherever the object goes later. Left out and reported: a redirect to a URL
 * outside the site or to a path no object holds, from a path that is not one
 * an alias may have or that an object holds. A second import replaces them.
 */
export async function importRedirects (db: Db, redirects: Record<string, string>, sitePath: string, report: ExchangeReport): Promise<void> {
  const wanted: Array<{ from: string, path: string, target: string }> = []
  for (const [from, to] of Object.entries(redirects)) {
    const path = checked(sitePathOf(from, sitePath))
    const target = /^[a-z][a-z0-9+.-]*:/i.test(to) ? null : to === sitePath || to === '/' ? null : checked(sitePathOf(to, sitePath))
    if (path === null) report.problem('redirect not imported: bad old path', from, 'Its old path is not a path of the site an alias may have.')
    else if (target === null) report.problem('redirect not imported: target not in the site', from, 'It leads to a URL outside the site, or to a path no object of the site holds.')
    else wanted.push({ from, path, target })
  }
  const store = new Redirects(db)
  let imported = 0
  for (let at = 0; at < wanted.length; at += BATCH) {
    const batch = wanted.slice(at, at + BATCH)
    const { rows } = await db.query<{ path: string, uid: string }>('SELECT path, uid FROM content WHERE path = ANY($1)', [batch.flatMap(r => [r.path, r.target])])
    const uids = new Map(rows.map(r => [r.path, r.uid]))
    const aliases: NewAlias[] = []
    for (const redirect of batch) {
      const uid = uids.get(redirect.target)
      if (uids.has(redirect.path)) report.problem('redirect not imported: old path taken', redirect.from, 'An object of the site holds its old path.')
      else if (uid === undefined) report.problem('redirect not imported: target not in the site', redirect.from, 'It leads to a URL outside the site, or to a path no object of the site holds.')
      else aliases.push({ path: redirect.path, uid, manual: false })
    }
    await store.add(aliases)
    imported += aliases.length
  }
  report.count('redirects imported', imported)
}

/**
 * The site's redirects for `redirects.json`: old path → the path of the
 * object now, of the objects under `base` (the export's top; a subtree's
 * top goes to the site root of wherever it is imported, and its paths with it).
 */
export async function exportRedirects (db: Db, base: string): Promise<Record<string, string>> {
  const parent = base === '/' ? '' : base.slice(0, base.lastIndexOf('/'))
  const { rows } = await db.query<{ path: string, target: string }>(`SELECT r.path, c.path AS target FROM redirects r JOIN content c ON c.uid = r.uid
    WHERE $1 = '/' OR c.path = $1 OR starts_with(c.path, $1 || '/') ORDER BY r.path COLLATE "C"`, [base])
  return Object.fromEntries(rows.map(r => [r.path, r.target.slice(parent.length)]))
}
