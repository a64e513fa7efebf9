import t from 'tap'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from '../helper.js'
import { unzip } from '../../core/exchange/zip.js'
import { runImport, smallSite, writeExport } from './exports.js'

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
