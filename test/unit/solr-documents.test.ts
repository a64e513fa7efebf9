import t from 'tap'
import { contentTypesDir } from '../../core/config/paths.js'
import { ContentTypeRegistry } from '../../core/content/registry.js'
import { solrFields } from '../../core/solr/configset.js'
import { SolrDocuments } from '../../core/solr/documents.js'

// When an atomic update can keep more than the full document: only with a
// field of the live core the service does not fill, or an unread schema.
// test/solr/indexing.test.ts checks what each form leaves in solr-dev.

const registry = await ContentTypeRegistry.load([contentTypesDir])
const documents = new SolrDocuments(registry)
const generated = solrFields(registry).map(f => f.name)

t.test('the generated configset: every field is the service\'s, the full document is as good', async t => {
  t.equal(documents.atomicKeepsMore(new Set(generated)), false)
  t.equal(documents.atomicKeepsMore(new Set([...generated, '_version_'])), false, 'nor does the version Solr assigns count')
  t.equal(documents.atomicKeepsMore(new Set(generated.filter(name => name !== 'speaker'))), false, 'nor a field the core lacks')
})

t.test('a field another writer fills, or an unknown schema: the atomic update keeps it', async t => {
  t.equal(documents.atomicKeepsMore(new Set([...generated, 'rating'])), true)
  t.equal(documents.atomicKeepsMore(null), true)
})
