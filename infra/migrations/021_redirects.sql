-- plone.app.redirector's storage: a path that named an object once (it was
-- moved or renamed from there, or an alias was added by hand) → that object.
-- Kept by uid, not by its new path, so that a chain of moves resolves to
-- where the object is now; an object deleted takes its redirects with it, and
-- an object created at an old path is found before the redirect (a GET
-- answers what is there: core/content/redirects.ts).
CREATE TABLE redirects (
  path text PRIMARY KEY,
  uid uuid NOT NULL REFERENCES content(uid) ON DELETE CASCADE,
  manual boolean NOT NULL DEFAULT false,
  created timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX redirects_uid ON redirects (uid);

-- A create (or an import) computes its object's path from its folder's path
-- as it read it; a move of that folder that commits meanwhile would leave the
-- new object at the folder's old path. Its foreign key's check waits for the
-- move (which holds the folder's row), but does not look at the path: this
-- does, after the wait (FOR KEY SHARE reads the row as the move left it), and
-- refuses the insert (SQLSTATE TKMOV) so that the create starts over at the
-- folder's new place (core/content/store.ts). Rows inserted by one statement
-- in path order (a copy's) find their parents written before them.
CREATE FUNCTION content_parent_path() RETURNS trigger LANGUAGE plpgsql AS $$ DECLARE parent_path text; BEGIN IF NEW.parent_uid IS NULL THEN RETURN NEW; END IF; SELECT path INTO parent_path FROM content WHERE uid = NEW.parent_uid FOR KEY SHARE; IF FOUND AND NEW.path <> (CASE WHEN parent_path = '/' THEN '' ELSE parent_path END) || '/' || NEW.id THEN RAISE EXCEPTION 'the folder % moved while the object was created', NEW.parent_uid USING ERRCODE = 'TKMOV'; END IF; RETURN NEW; END $$;
CREATE TRIGGER content_parent_path BEFORE INSERT ON content FOR EACH ROW EXECUTE FUNCTION content_parent_path();
