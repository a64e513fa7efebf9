-- Resumable uploads (TUS, as plone.restapi's @tus-upload): the bytes received so
-- far in a large object of their own, which becomes the file's when the upload
-- ends (handed over to `files` in the statement that creates or changes the
-- object, core/content/uploads.ts). An upload that ends otherwise (expired,
-- deleted, its folder deleted, or ended into an image, whose bytes are kept in
-- `blobs`) unlinks its large object: no byte is left behind.
CREATE TABLE uploads (
  id uuid PRIMARY KEY,
  context uuid NOT NULL REFERENCES content(uid) ON DELETE CASCADE,
  mode text NOT NULL CHECK (mode IN ('create', 'replace')),
  owner text NOT NULL,
  length bigint NOT NULL CHECK (length >= 0),
  received bigint NOT NULL DEFAULT 0 CHECK (received >= 0 AND received <= length),
  metadata jsonb NOT NULL,
  oid oid NOT NULL,
  expires timestamptz NOT NULL,
  claimed timestamptz
);
CREATE INDEX uploads_expires ON uploads (expires);
CREATE INDEX uploads_owner ON uploads (owner);
-- The trigger asks whether the large object became a file's.
CREATE INDEX files_oid ON files (oid);
CREATE FUNCTION uploads_unlink() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NOT EXISTS (SELECT 1 FROM files WHERE oid = OLD.oid) THEN PERFORM lo_unlink(OLD.oid); END IF; RETURN NULL; END $$;
CREATE TRIGGER uploads_unlink AFTER DELETE ON uploads FOR EACH ROW EXECUTE FUNCTION uploads_unlink();
