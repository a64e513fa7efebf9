import t from 'tap'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, formUpload } from '../helper.js'
import { unzip, zipFolder } from '../../core/exchange/zip.js'
import { item, runImport, smallSite, writeExport } from './exports.js'

/** `POST <path>/@export` (plugins/routes/exchange.ts): a zip in plone.exportimport's format, for Managers and Site Administrators only. */
const { app, call, tokenFor, inject } = await build(t)
const site = smallSite()
await runImport(app, writeExport(site.objects, { metadata: site.metadata, principals: site.principals }))

t.test('who may export: Managers and Site Administrators; nobody else learns anything', async t => {
  t.equal((await call('POST', '/@export')).statusCode, 401)
  const member = await call('POST', '/@export', undefined, await tokenFor('mia', ['Member']))
  t.equal(member.statusCode, 403)
  t.equal(member.json().type, 'Forbidden')
  t.equal((await call('POST', '/@export', undefined, await tokenFor('ed', ['Editor', 'Reviewer']))).statusCode, 403)
  t.equal((await call('POST', '/nothing/@export', undefined, await tokenFor('sam', ['Site Administrator']))).statusCode, 404)
})

t.test('a Site Administrator gets the subtree as a zip that reads as an export', async t => {
  const res = await inject({ method: 'POST', url: '/docs/@export', headers: { authorization: `Bearer ${await tokenFor('sam', ['Site Administrator'])}` } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/zip')
  const dir = mkdtempSync(join(tmpdir(), 'endpoint-'))
  writeFileSync(join(dir, 'export.zip'), res.rawPayload)
  await unzip(join(dir, 'export.zip'), join(dir, 'out'), { maxEntries: 100, maxBytes: 64 * 1024 * 1024 })
  const metadata = JSON.parse(readFileSync(join(dir, 'out', 'content', '__metadata__.json'), 'utf8'))
  t.equal(metadata._data_files_.length, 7)
  t.equal(metadata._blob_files_.length, 2)
})

t.test('POST /@import with the zip of an export (plone.exportimport\'s REST import) imports it into another site', async t => {
  // The subtree of /docs: both sites have a /talks folder of their own (another UID), which would be left out and reported.
  const exported = await inject({ method: 'POST', url: '/docs/@export', headers: { authorization: `Bearer ${await tokenFor('admin')}` } })
  t.equal(exported.statusCode, 200)
  const other = await build(t)
  const sam = await other.tokenFor('sam', ['Site Administrator'])
  const send = async (path: string, bytes: Buffer, token?: string, field?: string): Promise<Awaited<ReturnType<typeof inject>>> => await formUpload(other.inject, path, bytes, { token, type: 'application/zip', field, filename: 'export.zip' })
  t.equal((await send('/@import', exported.rawPayload)).statusCode, 401, 'anonymous')
  t.equal((await send('/@import', exported.rawPayload, await other.tokenFor('ed', ['Editor']))).statusCode, 403, 'an Editor')
  t.equal((await send('/talks/@import', exported.rawPayload, sam)).statusCode, 400, 'a site is imported at the root')
  t.equal((await send('/@import', exported.rawPayload, sam, 'other')).statusCode, 400, 'the zip is in the part file')
  t.equal((await other.call('GET', '/docs', undefined, sam)).statusCode, 404, 'nothing imported by a refused request')

  const res = await send('/@import', exported.rawPayload, sam)
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().status, 'success', JSON.stringify(res.json().report.problems))
  t.equal(res.json().report.counts['objects imported'], 7)
  const docs = await other.call('GET', '/docs', undefined, sam)
  t.equal(docs.statusCode, 200)
  t.equal(docs.json().UID, (await call('GET', '/docs', undefined, await tokenFor('admin'))).json().UID, 'the same UID')

  const junk = await send('/@import', Buffer.from('not a zip at all'), sam)
  t.equal(junk.statusCode, 200)
  t.equal(junk.json().status, 'incomplete')
  t.ok(junk.json().report.problems.length > 0, 'what could not be read is reported')
  t.equal((await other.call('POST', '/@import', { items: [{ '@type': 'Document', id: 'json-still', title: 'JSON' }] }, sam)).statusCode, 201, 'JSON items still import in bulk at the root')
})

t.test('POST /@import takes a mapping in the form field mapping, checked before anything is imported', async t => {
  const other = await build(t)
  const sam = await other.tokenFor('sam', ['Site Administrator'])
  const dir = writeExport([
    { data: item(501, 'FormFolder', 'contact', null, { title: 'Contact us', location: 'Basel' }) },
    { data: item(502, 'PloneGlossary', 'glossary', null) }
  ])
  const zip = join(mkdtempSync(join(tmpdir(), 'endpoint-')), 'export.zip')
  await zipFolder(dir, zip)
  const send = async (mapping: string): Promise<Awaited<ReturnType<typeof inject>>> => await formUpload(other.inject, '/@import', readFileSync(zip), { token: sam, type: 'application/zip', filename: 'export.zip', fields: { mapping } })

  for (const [bad, why] of [['{"types": {"FormFolder": "Nothing here"}}', /no content type/], ['not json', /not JSON/], ['{"types": {"__proto__": "folder"}}', /not a name/], ['x'.repeat(2 * 1024 * 1024), /too long/]] as const) {
    const res = await send(bad)
    t.equal(res.statusCode, 400, res.body.slice(0, 200))
    t.match(res.json(), { type: 'BadRequest', message: why })
  }
  t.equal((await other.call('GET', '/contact', undefined, sam)).statusCode, 404, 'nothing imported by a refused mapping')

  const res = await send(JSON.stringify({ types: { FormFolder: 'folder', PloneGlossary: null }, fields: { '*': { location: null } } }))
  t.equal(res.statusCode, 200, res.body)
  t.same(res.json().report.problems.map((p: { kind: string }) => p.kind), ['type left out by the mapping: PloneGlossary'])
  t.equal(res.json().report.counts['fields left out by the mapping'], 1)
  t.match((await other.call('GET', '/contact', undefined, sam)).json(), { '@type': 'folder', title: 'Contact us' }, 'the FormFolder is a folder')
})
