import t from 'tap'
import { build } from '../helper.js'
import { MappingProblem, parseMapping } from '../../core/exchange/mapping.js'
import { typeNamed } from '../../core/exchange/reader.js'
import { item, runImport, writeExport } from './exports.js'

/**
 * The mapping file of an import (core/exchange/mapping.ts, docs/moving-a-plone-site.md
 * "Mapping"): types the service lacks onto its own or left out, fields renamed or left out, an
 * old Document's rich text made into blocks; a mapping the service cannot follow is refused
 * before anything is imported.
 */
const { app, call, tokenFor } = await build(t)
const admin = await tokenFor('admin')
const parse = (text: string): unknown => parseMapping(text, app.contentTypes, name => typeNamed(app.contentTypes, name))

t.test('a mapping the service cannot follow is refused, saying why', async t => {
  for (const [text, why] of [
    ['not json', /not JSON/],
    ['[]', /one JSON object/],
    ['{"types": {}, "extra": 1}', /only "types" and "fields"/],
    ['{"types": {"FormFolder": "NoSuchType"}}', /no content type 'NoSuchType'/],
    ['{"types": {"FormFolder": 3}}', /a name or null/],
    ['{"types": {"__proto__": "folder"}}', /not a name/],
    ['{"fields": {"constructor": {"a": "b"}}}', /not a type name/],
    ['{"fields": {"Document": {"text": "nothing_like_it"}}}', /no type it lands on has a field 'nothing_like_it'/],
    ['{"fields": {"Link": {"text": "blocks"}}}', /has no blocks/],
    ['{"fields": {"Document": []}}', /must be an object of names/]
  ] as const) {
    let thrown: unknown
    try { parse(text) } catch (err) { thrown = err }
    t.ok(thrown instanceof MappingProblem && why.test(thrown.message), `${text}: ${String(thrown)}`)
  }
  // Read into objects without a prototype: compared as JSON.
  t.same(JSON.parse(JSON.stringify(parse('{"types": {"FormFolder": "Folder", "PloneGlossary": null}, "fields": {"*": {"location": null}}}'))),
    { types: { FormFolder: 'Folder', PloneGlossary: null }, fields: { '*': { location: null } } })
})

t.test('types mapped and left out, fields renamed and left out, rich text made into blocks', async t => {
  const text = { data: '<p>Old <b>archetypes</b> text<script>alert(1)</script></p>', 'content-type': 'text/html', encoding: 'utf-8' }
  const dir = writeExport([
    { data: item(301, 'FormFolder', 'contact', null, { location: 'Bonn' }) },
    { data: item(302, 'Document', 'old-page', 301, { text, keywords: ['plone', 'history'] }) },
    { data: item(303, 'PloneGlossary', 'glossary', null) }
  ])
  const mapping = parseMapping(JSON.stringify({
    types: { FormFolder: 'folder', PloneGlossary: null },
    fields: { '*': { location: null, keywords: 'subjects' }, Document: { text: 'blocks' } }
  }), app.contentTypes, name => typeNamed(app.contentTypes, name))
  const report = await runImport(app, dir, { mapping })
  t.equal(report.counts['objects imported'], 2, JSON.stringify(report))
  t.equal(report.counts['fields left out by the mapping'], 1, 'location')
  t.same(report.problems.map(p => p.kind), ['type left out by the mapping: PloneGlossary'])

  const folder = (await call('GET', '/contact', undefined, admin)).json()
  t.equal(folder['@type'], 'folder', 'FormFolder became a folder')
  const page = (await call('GET', '/contact/old-page', undefined, admin)).json()
  t.same(page.subjects, ['plone', 'history'], 'keywords became subjects')
  const blocks = page.blocks_layout.items.map((id: string) => page.blocks[id])
  t.same(blocks.map((b: { '@type': string }) => b['@type']), ['title', 'html'])
  t.match(blocks[1].html, /<b>archetypes<\/b>/)
  t.notMatch(blocks[1].html, /script/, 'the markup is sanitised as rich text is')
  const found = (await call('GET', '/@search?SearchableText=archetypes', undefined, admin)).json()
  t.same(found.items.map((i: { '@id': string }) => new URL(i['@id']).pathname), ['/contact/old-page'], 'its text is found')

  const again = await runImport(app, dir, { mapping })
  t.equal(again.counts['objects imported'], 2)
  t.same((await call('GET', '/contact/old-page', undefined, admin)).json().blocks_layout, page.blocks_layout, 'a second import makes the same blocks')
})
