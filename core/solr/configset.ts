import { INDEX_KINDS } from '../query/index-kinds.js'
import type { ContentTypeRegistry } from '../content/registry.js'

/** One field of the generated Solr schema. */
export interface SolrField {
  name: string
  type: 'string' | 'text' | 'boolean' | 'pint' | 'plong' | 'pdate'
  indexed: boolean
  stored: boolean
  multiValued: boolean
  required?: boolean
  docValues?: boolean
  /** Also copied into the catch-all `default` field. */
  copyToDefault?: boolean
}

/** Fields of the original index schema (docs/search.md) that only Solr has: the catalogue keeps full text in a tsvector. */
const SOLR_ONLY: SolrField[] = [
  { name: 'default', type: 'text', indexed: true, stored: false, multiValued: true },
  { name: 'SearchableText', type: 'text', indexed: true, stored: false, multiValued: false, copyToDefault: true },
  { name: 'description', type: 'text', indexed: true, stored: true, multiValued: false, copyToDefault: true },
  { name: 'searchwords', type: 'string', indexed: true, stored: false, multiValued: true },
  { name: 'showinsearch', type: 'boolean', indexed: true, stored: false, multiValued: false },
  // Needed by Solr for atomic updates and optimistic concurrency.
  { name: '_version_', type: 'plong', indexed: false, stored: false, multiValued: false, docValues: true }
]

/** Text fields the seed copies into `default` besides SearchableText and description. */
const COPIED_TO_DEFAULT = new Set(['Title', 'Description', 'Subject'])

/**
 * The Solr fields, derived from the same index definitions as the catalogue's
 * columns (core indexes plus every index a content type declares).
 */
export function solrFields (registry: ContentTypeRegistry): SolrField[] {
  const fields: SolrField[] = [...registry.indexes.values()].map(index => ({
    name: index.name,
    type: INDEX_KINDS[index.kind].solr,
    indexed: index.indexed,
    stored: index.metadata,
    multiValued: index.multiValued,
    ...(index.name === 'UID' ? { required: true } : {}),
    ...(COPIED_TO_DEFAULT.has(index.name) ? { copyToDefault: true } : {})
  }))
  const known = new Set(fields.map(f => f.name))
  return [...fields, ...SOLR_ONLY.filter(f => !known.has(f.name))].sort((a, b) => a.name.localeCompare(b.name))
}

/** What the generated configset has and the live core lacks, and the reverse. */
export interface SchemaDrift { missing: string[], extra: string[] }

export function schemaDrift (generated: Iterable<string>, live: Iterable<string>): SchemaDrift {
  const want = new Set(generated)
  const have = new Set(live)
  return {
    missing: [...want].filter(name => !have.has(name)).sort(),
    extra: [...have].filter(name => !want.has(name)).sort()
  }
}

const attr = (value: boolean): string => value ? 'true' : 'false'
const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

const HEADER = (file: string): string => `<?xml version="1.0" encoding="UTF-8"?>
<!-- ${file}: generated from the content types by the \`schema\` operation of \`npm run solr\`. Do not edit:
     a test fails when it is stale. -->
`

/** schema.xml for Solr 9 (classic schema, unique key UID). */
export function schemaXml (registry: ContentTypeRegistry): string {
  const fields = solrFields(registry)
  const lines = fields.map(f =>
    `  <field name="${escapeXml(f.name)}" type="${f.type}" indexed="${attr(f.indexed)}" stored="${attr(f.stored)}" multiValued="${attr(f.multiValued)}"` +
    `${f.required === true ? ' required="true"' : ''}${f.docValues === true ? ' docValues="true"' : ''}/>`)
  const copies = fields.filter(f => f.copyToDefault === true).map(f => `  <copyField source="${escapeXml(f.name)}" dest="default"/>`)
  return `${HEADER('schema.xml')}<schema name="plone" version="1.6">
  <uniqueKey>UID</uniqueKey>

  <fieldType name="string" class="solr.StrField" sortMissingLast="true"/>
  <fieldType name="boolean" class="solr.BoolField" sortMissingLast="true"/>
  <fieldType name="pint" class="solr.IntPointField" docValues="true"/>
  <fieldType name="plong" class="solr.LongPointField" docValues="true"/>
  <fieldType name="pdate" class="solr.DatePointField" docValues="true"/>
  <!-- Words, folded as the catalogue folds them: case and accents do not matter. -->
  <fieldType name="text" class="solr.TextField" positionIncrementGap="100">
    <analyzer>
      <tokenizer class="solr.StandardTokenizerFactory"/>
      <filter class="solr.ASCIIFoldingFilterFactory"/>
      <filter class="solr.LowerCaseFilterFactory"/>
    </analyzer>
  </fieldType>

${lines.join('\n')}

${copies.join('\n')}
</schema>
`
}

/** Solr's autoCommit maxTime in the generated solrconfig.xml: how soon an update sent without a commit is seen at the latest. */
export const AUTO_COMMIT_MAX_TIME_MS = 15_000

/**
 * solrconfig.xml for Solr 9: /select, /update, ping; commits tunable by
 * system properties (`-Dsolr.autoCommit.maxDocs=…`), the synchronous batched
 * strategy's `autoCommitMaxDocs`/`autoCommitMaxTime`.
 *
 * Only what Solr 9 honours: no `maxBooleanClauses` (the node-wide limit of
 * solr.xml, `solr.max.booleanClauses`, caps it silently, so the node is where
 * it is raised: docs/search.md) and no `enableRemoteStreaming` (deprecated and
 * ignored since Solr 9).
 */
export function solrconfigXml (): string {
  return `${HEADER('solrconfig.xml')}<config>
  <luceneMatchVersion>9.0</luceneMatchVersion>
  <dataDir>\${solr.data.dir:}</dataDir>
  <directoryFactory name="DirectoryFactory" class="\${solr.directoryFactory:solr.NRTCachingDirectoryFactory}"/>
  <schemaFactory class="ClassicIndexSchemaFactory"/>

  <updateHandler class="solr.DirectUpdateHandler2">
    <updateLog>
      <str name="dir">\${solr.ulog.dir:}</str>
    </updateLog>
    <autoCommit>
      <maxDocs>\${solr.autoCommit.maxDocs:-1}</maxDocs>
      <maxTime>\${solr.autoCommit.maxTime:${AUTO_COMMIT_MAX_TIME_MS}}</maxTime>
      <openSearcher>true</openSearcher>
    </autoCommit>
    <autoSoftCommit>
      <maxDocs>\${solr.autoSoftCommit.maxDocs:-1}</maxDocs>
      <maxTime>\${solr.autoSoftCommit.maxTime:-1}</maxTime>
    </autoSoftCommit>
  </updateHandler>

  <query>
    <filterCache size="512" initialSize="512" autowarmCount="0"/>
    <queryResultCache size="512" initialSize="512" autowarmCount="0"/>
    <documentCache size="512" initialSize="512" autowarmCount="0"/>
  </query>

  <requestDispatcher>
    <requestParsers multipartUploadLimitInKB="2048" formdataUploadLimitInKB="2048"/>
  </requestDispatcher>

  <requestHandler name="/select" class="solr.SearchHandler">
    <lst name="defaults">
      <str name="echoParams">explicit</str>
      <str name="wt">json</str>
      <str name="df">default</str>
      <str name="q.op">AND</str>
      <int name="rows">10</int>
    </lst>
  </requestHandler>
  <requestHandler name="/update" class="solr.UpdateRequestHandler"/>
  <requestHandler name="/admin/ping" class="solr.PingRequestHandler">
    <lst name="invariants">
      <str name="q">*:*</str>
    </lst>
  </requestHandler>
</config>
`
}
