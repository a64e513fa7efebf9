-- What each process holds of the catalogue in memory (core/catalog/resident/)
-- follows the table by transaction ids (core/catalog/resident/feed.ts): every
-- row written carries the id of the transaction that wrote it, every row
-- removed leaves a tombstone with its transaction's id, both set by triggers
-- so that no write path (an object's write, an import, a delete's cascade)
-- can forget them. A process reads what changed at or above the oldest
-- transaction that was running when it last looked.
ALTER TABLE catalog ADD COLUMN changed_by xid8;
CREATE INDEX catalog_changed_by ON catalog (changed_by);
CREATE TABLE catalog_removed (
  uid uuid NOT NULL,
  removed_by xid8 NOT NULL DEFAULT pg_current_xact_id(),
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX catalog_removed_by ON catalog_removed (removed_by);
CREATE INDEX catalog_removed_at ON catalog_removed (at);
CREATE FUNCTION catalog_row_written() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.changed_by := pg_current_xact_id(); RETURN NEW; END $$;
CREATE TRIGGER catalog_row_written BEFORE INSERT OR UPDATE ON catalog FOR EACH ROW EXECUTE FUNCTION catalog_row_written();
CREATE FUNCTION catalog_rows_removed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO catalog_removed (uid) SELECT uid FROM removed; RETURN NULL; END $$;
CREATE TRIGGER catalog_rows_removed AFTER DELETE ON catalog REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION catalog_rows_removed();
