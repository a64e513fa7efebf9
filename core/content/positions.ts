/**
 * A folder's positions: each object's place in its folder (getObjPositionInParent,
 * the order of a folder's listing), from a counter a folder (`folder_positions`,
 * migrations 009 and 014).
 *
 * Only the write that creates takes positions, in its own statement (a create)
 * or transaction (an import), after every check passed: the counter moves if
 * and only if that write commits. A refused request (401, 403, 404, 405, 400,
 * 409, 413) never reaches it, and a write that fails (an id taken, the folder
 * deleted meanwhile, any rolled-back transaction) takes its advance back with
 * it. Positions are therefore unique and ordered in a folder, dense but for
 * deleted objects, and a folder's counter grows by the objects created in it
 * only. It is a bigint: at a million creates a second in one folder it would
 * reach 2^53 (where JavaScript's numbers stop being exact; pg's int8 parser is
 * Number, core/db/db.ts) after 285 years.
 *
 * The price: the counter's row is locked from the moment a write takes its
 * positions until that write commits, so creates in one folder take turns for
 * the rest of their write (for a create, one statement and its commit; for an
 * import, its transaction). Creates in different folders never wait for each
 * other, and nobody locks the folder's own row (docs/architecture.md).
 */

/**
 * A data-modifying CTE that takes `count` positions (an SQL integer
 * expression) in the folder whose uid is `folder` (an SQL expression) and
 * returns the first of them as `position`. A counter that is missing
 * (a new folder; after a crash, as the table is unlogged) starts after the
 * folder's highest position.
 */
export const takePositions = (folder: string, count: string): string => `INSERT INTO folder_positions (parent_uid, next)
  VALUES (${folder}, (SELECT COALESCE(max(position), -1) + 1 FROM content WHERE parent_uid = ${folder}) + ${count})
  ON CONFLICT (parent_uid) DO UPDATE SET next = folder_positions.next + ${count} RETURNING next - ${count} AS position`

/** The position of an object not written yet: the write that creates it takes the real one. */
export const UNPLACED = -1
