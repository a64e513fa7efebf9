import { NotFound } from '../errors.js'
import { ACCESS_CHANGED } from './access-guard.js'
import type { Located } from './rows.js'

// Why a write of an object failed, read from PostgreSQL's answer: what ContentStore starts over for, or answers.

/** Whether a write failed because the object's id (or path) is taken in its folder. */
export const idTaken = (err: unknown): boolean => {
  const { code, constraint } = err as { code?: string, constraint?: string }
  return code === '23505' && (constraint === 'content_parent_id' || constraint === 'content_path_key')
}

/** The SQLSTATE of an insert into a folder that moved since its path was read (infra/migrations/021_redirects.sql). */
export const FOLDER_MOVED = 'TKMOV'

/** Whether a write failed because its folder moved, or the roles above it changed, while it ran: it starts over from the folder as it is. */
export const folderChanged = (err: unknown): boolean => [FOLDER_MOVED, ACCESS_CHANGED].includes((err as { code?: string }).code ?? '')

/** 404 for a create whose folder went while the request ran. */
export const folderGone = (parent: Located): Error => NotFound(parent.obj.path, `${parent.obj.path} was deleted while the request ran.`)
