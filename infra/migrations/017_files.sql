-- Files (plone.namedfile's blob files) in PostgreSQL large objects: one pg_dump
-- still backs up everything, and a file is read in slices, never held whole.
-- A large object is unlinked when its row goes (its object deleted, the field
-- cleared) or points to another (a new upload): no file is left behind.
CREATE TABLE files (
  uid uuid NOT NULL REFERENCES content(uid) ON DELETE CASCADE,
  field text NOT NULL,
  oid oid NOT NULL,
  size bigint NOT NULL,
  PRIMARY KEY (uid, field)
);
CREATE FUNCTION files_unlink() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF TG_OP = 'DELETE' OR OLD.oid <> NEW.oid THEN PERFORM lo_unlink(OLD.oid); END IF; RETURN NULL; END $$;
CREATE TRIGGER files_unlink AFTER DELETE OR UPDATE ON files FOR EACH ROW EXECUTE FUNCTION files_unlink();
