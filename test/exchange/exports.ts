import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { png } from '../image-samples.js'
import { importSite } from '../../core/exchange/site.js'
import type { ImportOptions } from '../../core/exchange/importer.js'
import type { ProblemSummary } from '../../core/exchange/report.js'
import { Groups } from '../../core/security/groups.js'
import { writeContext } from '../../plugins/support/writes.js'

/**
 * Exports written by hand in plone.exportimport's documented layout
 * (its tests' `_resources/base_import`): `content/<uid>/data.json`, blobs
 * beside, `content/__metadata__.json`, `principals.json`, `redirects.json`.
 */
/** `folder`: where its data.json goes (its UID unless given). */
export interface Exported { data: Record<string, unknown>, blobs?: Record<string, Buffer>, folder?: string }

export const uid = (n: number): string => createHash('md5').update(`object ${n}`).digest('hex')

export function writeExport (objects: Exported[], extra: { metadata?: Record<string, unknown>, principals?: unknown, redirects?: unknown, files?: Record<string, string | Buffer> } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'exchange-'))
  mkdirSync(join(dir, 'content'))
  const dataFiles: string[] = []
  const blobFiles: string[] = []
  for (const { data, blobs = {}, folder = String(data.UID) } of objects) {
    mkdirSync(join(dir, 'content', folder), { recursive: true })
    writeFileSync(join(dir, 'content', folder, 'data.json'), JSON.stringify(data, null, 2))
    dataFiles.push(`${folder}/data.json`)
    for (const [path, bytes] of Object.entries(blobs)) {
      mkdirSync(dirname(join(dir, 'content', path)), { recursive: true })
      writeFileSync(join(dir, 'content', path), bytes)
      blobFiles.push(path)
    }
  }
  writeFileSync(join(dir, 'content', '__metadata__.json'), JSON.stringify({ __version__: '1.0.0', _blob_files_: blobFiles, _data_files_: dataFiles, ...extra.metadata }))
  writeFileSync(join(dir, 'principals.json'), JSON.stringify(extra.principals ?? { groups: [], members: [] }))
  writeFileSync(join(dir, 'redirects.json'), JSON.stringify(extra.redirects ?? {}))
  for (const [path, text] of Object.entries(extra.files ?? {})) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

const ROOT_PARENT = { '@id': '/', '@type': 'Plone Site', UID: 'plone_site_root', title: 'Site' }

/** A data.json as plone.exportimport writes one (the keys the service does not keep included). */
export function item (n: number, type: string, id: string, parent: number | null, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    '@id': `/${id}`,
    '@type': type,
    UID: uid(n),
    id,
    parent: parent === null ? ROOT_PARENT : { '@id': '/p', '@type': 'Folder', UID: uid(parent) },
    created: '2024-02-13T18:15:56+00:00',
    modified: '2024-02-14T22:22:11+00:00',
    creators: ['editor'],
    review_state: 'private',
    workflow_history: { simple_publication_workflow: [{ action: null, actor: 'editor', comments: '', review_state: 'private', time: '2024-02-13T18:15:56+00:00' }] },
    'exportimport.constrains': {},
    'exportimport.conversation': [],
    'exportimport.versions': {},
    is_folderish: type === 'Folder',
    language: '##DEFAULT##',
    layout: 'document_view',
    lock: {},
    version: 'current',
    title: `Title ${n}`,
    description: '',
    ...fields
  }
}

export const PICTURE = png(4, 3)
export const FILE_BYTES = randomBytes(3 * 1024 * 1024 + 17)

/** A small site of every kind the service has, with a user's local role, a published page and links by UID. */
export function smallSite (): { objects: Exported[], metadata: Record<string, unknown>, principals: unknown } {
  const published = {
    review_state: 'published',
    workflow_history: {
      simple_publication_workflow: [
        { action: null, actor: 'editor', comments: '', review_state: 'private', time: '2024-02-13T18:15:56+00:00' },
        { action: 'publish', actor: 'admin', comments: 'ok', review_state: 'published', time: '2024-02-14T10:00:00+00:00' }]
    },
    effective: '2024-02-14T10:00:00+00:00'
  }
  const objects: Exported[] = [
    { data: item(1, 'Folder', 'docs', null, published) },
    { data: item(2, 'Document', 'page', 1, { ...published, blocks: { a1: { '@type': 'slate', value: [{ type: 'p', children: [{ type: 'link', data: { url: `../resolveuid/${uid(3)}` }, children: [{ text: 'news' }] }] }], plaintext: 'news' } }, blocks_layout: { items: ['a1'] } }) },
    { data: item(3, 'News Item', 'news', 1, published) },
    { data: item(4, 'Event', 'event', 1, { start: '2024-06-01T09:00:00+00:00', end: '2024-06-01T17:00:00+00:00' }) },
    { data: item(5, 'Link', 'link', 1, { remoteUrl: 'https://plone.org' }) },
    { data: item(6, 'Image', 'picture.png', 1, { image: { blob_path: `${uid(6)}/image/picture.png`, 'content-type': 'image/png', filename: 'picture.png', size: PICTURE.length, width: 4, height: 3 }, review_state: null, workflow_history: {} }), blobs: { [`${uid(6)}/image/picture.png`]: PICTURE } },
    { data: item(7, 'File', 'slides.pdf', 1, { file: { blob_path: `${uid(7)}/file/slides.pdf`, 'content-type': 'application/pdf', filename: 'slides.pdf', size: FILE_BYTES.length } }), blobs: { [`${uid(7)}/file/slides.pdf`]: FILE_BYTES } },
    { data: item(8, 'Folder', 'private', null) }
  ]
  const metadata = {
    ordering: { [uid(1)]: 0, [uid(8)]: 1, [uid(7)]: 0, [uid(6)]: 1, [uid(5)]: 2, [uid(4)]: 3, [uid(3)]: 4, [uid(2)]: 5 },
    local_roles: { [uid(8)]: { block: 1, local_roles: { editor: ['Owner'], reader: ['Reader'] } }, [uid(1)]: { local_roles: { editor: ['Owner', 'Editor'] } } },
    default_page: {},
    local_permissions: {}
  }
  const principals = {
    groups: [{ groupid: 'staff', title: 'Staff', description: '', email: '', roles: ['Reviewer'], groups: [], principals: [] }],
    members: [
      { username: 'editor', email: 'editor@example.org', fullname: 'Ed Itor', password: ssha('editor-secret', Buffer.from('pepper42')), roles: ['Member'], groups: ['staff'], description: '', home_page: '', location: '' },
      { username: 'reader', email: 'reader@example.org', fullname: 'Rea Der', password: ssha('reader-secret', randomBytes(4)), roles: ['Member'], groups: [], description: '', home_page: '', location: '' }
    ]
  }
  return { objects, metadata, principals }
}

/** AuthEncoding's SSHA, written from its definition: base64 of sha1(password + salt) followed by the salt. */
export function ssha (password: string, salt: Buffer): string {
  return `{SSHA}${Buffer.concat([createHash('sha1').update(password).update(salt).digest(), salt]).toString('base64')}`
}

/** The import as the CLI runs it, with a test app's parts. */
export async function runImport (app: FastifyInstance, path: string, options: Partial<ImportOptions> = {}, zipMaxBytes = 64 * 1024 * 1024): Promise<{ counts: Record<string, number>, problems: ProblemSummary[] }> {
  const limits = { jsonMaxBytes: 1024 * 1024, maxObjects: 10_000, imageMaxBytes: app.config.IMAGE_MAX_BYTES, fileMaxBytes: 64 * 1024 * 1024, zipMaxBytes }
  const report = await importSite(path, { db: app.db, content: app.content, types: app.contentTypes, users: app.users, groups: new Groups(app.db) }, limits,
    { writeContext: writeContext(app, 'http://localhost:80', {}, 'create'), ...options })
  return report.toJSON()
}
