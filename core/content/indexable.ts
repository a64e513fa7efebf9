import type { IndexableObject } from '../catalog/indexes.js'
import { allowedRolesAndUsers } from '../security/permissions.js'
import type { ContentType } from './registry.js'
import type { Located } from './rows.js'

/** What the indexes (catalogue and Solr) see of an object: its row, its type's facts, and who may view it. */
export function indexableOf ({ obj, lineage, type }: Located): IndexableObject {
  return {
    uid: obj.uid,
    id: obj.id,
    path: obj.path,
    portal_type: obj.portal_type,
    type_title: type.title,
    folderish: type.folderish,
    review_state: obj.review_state,
    creators: obj.creators,
    created: obj.created,
    modified: obj.modified,
    position: obj.position,
    data: obj.data,
    allowedRolesAndUsers: allowedRolesAndUsers(type, obj, lineage),
    imageFields: imageFieldsOf(type, obj.data)
  }
}

/** The type's image fields that hold an image in `data`, in declaration order. */
export function imageFieldsOf (type: ContentType, data: Record<string, unknown>): string[] {
  return [...type.fields].filter(([name, field]) => field.kind === 'image' && data[name] !== undefined && data[name] !== null).map(([name]) => name)
}
