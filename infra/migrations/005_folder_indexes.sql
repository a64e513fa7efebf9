-- A create finds a free id in its folder (`id = $2 OR id LIKE $2 || '-%'`) and
-- the next position (`max(position) + 1`) while it holds the folder's lock;
-- without these indexes both scan the whole folder, so creates in a folder of
-- 100 000 talks took ~90 ms each, one at a time (docs/performance.md).
-- text_pattern_ops: the unique (parent_uid, id) index is in the database's
-- collation and cannot serve a LIKE prefix.
CREATE INDEX content_parent_position ON content (parent_uid, position);
CREATE INDEX content_parent_id_prefix ON content (parent_uid, id text_pattern_ops);
