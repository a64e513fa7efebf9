import t from 'tap'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADMIN_PASSWORD, build, JWT_SECRET } from '../helper.js'
import { main } from '../../app/site-cli.js'
import { item, smallSite, writeExport } from './exports.js'

/** `npm run site -- import|export <folder>` (app/site-cli.ts), run in this process against the test's database. */
const { app, call, databaseUrl, tokenFor } = await build(t)
Object.assign(process.env, { DATABASE_URL: databaseUrl, ADMIN_PASSWORD, JWT_SECRET, LOG_LEVEL: 'silent' })
const output = (): { text: string, write: (s: string) => void } => {
  const o = { text: '', write: (s: string) => { o.text += s } }
  return o
}

t.test('usage for anything else', async t => {
  const out = output()
  t.equal(await main(['unpack', '/tmp'], out, output()), 2)
  t.match(out.text, /usage: npm run site/)
  t.equal(await main(['import'], output(), output()), 2)
  t.equal(await main(['import', '/tmp', '--unknown'], output(), output()), 2, 'an option it does not know')
  for (const writers of ['0', '9', '1.5', 'two', '-1']) t.equal(await main(['import', '/tmp', '--writers', writers], output(), output()), 2, `--writers ${writers}`)
})

t.test('imports a folder with a report and progress, then exports the site', async t => {
  const site = smallSite()
  const dir = writeExport(site.objects, { metadata: site.metadata, principals: site.principals })
  const out = output()
  const err = output()
  t.equal(await main(['import', dir, '--writers', '1'], out, err), 1, 'exit 1: something was left out (an image without a workflow state)')
  t.match(out.text, /objects imported: 8/)
  t.match(out.text, /workflow state not kept: 1/)
  t.match(err.text, /import: 8\/8 \(100%\)/)
  t.equal((await call('GET', '/docs/page', undefined, await tokenFor('admin'))).statusCode, 200)

  const target = join(mkdtempSync(join(tmpdir(), 'site-cli-')), 'export')
  const exported = output()
  t.equal(await main(['export', target, '--path', '/docs'], exported, output()), 0)
  t.match(exported.text, /exported 7 objects and 2 blobs/)
  t.equal(JSON.parse(readFileSync(join(target, 'content', '__metadata__.json'), 'utf8'))._data_files_.length, 7)
  t.equal(Number((await app.db.query<{ n: string }>('SELECT count(*) AS n FROM users WHERE id = \'editor\'')).rows[0].n), 1)
})

t.test('--map: a mapping the service cannot follow stops the import before it starts (exit 2); one it can is followed', async t => {
  const dir = writeExport([{ data: item(401, 'FormFolder', 'form', null) }])
  const mappingDir = mkdtempSync(join(tmpdir(), 'site-cli-map-'))
  const bad = join(mappingDir, 'bad.json')
  writeFileSync(bad, '{"types": {"FormFolder": "NoSuchType"}}')
  const err = output()
  t.equal(await main(['import', dir, '--map', bad], output(), err), 2)
  t.match(err.text, /no content type 'NoSuchType'/)
  t.equal(await main(['import', dir, '--map', join(mappingDir, 'missing.json')], output(), output()), 2, 'a file that is not there')
  t.equal((await call('GET', '/form', undefined, await tokenFor('admin'))).statusCode, 404, 'nothing imported')
  const good = join(mappingDir, 'good.json')
  writeFileSync(good, '{"types": {"FormFolder": "folder"}}')
  const out = output()
  t.equal(await main(['import', dir, '--map', good], out, output()), 0, out.text)
  t.equal((await call('GET', '/form', undefined, await tokenFor('admin'))).json()['@type'], 'folder')
})
