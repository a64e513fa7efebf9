-- Versions of objects (Plone's CMFEditions, through plone.versioning): the
-- state an edit of a versionable type left, written by the statement of that
-- edit (core/content/versions.ts), read only by @history. Version 0 is the
-- object as created; each edit, and each revert, adds the next. Retention
-- (VERSIONS_KEPT) deletes the oldest in the same statement, so ids are never
-- reused: the next is one above the highest kept.
CREATE TABLE versions (
  uid uuid NOT NULL REFERENCES content(uid) ON DELETE CASCADE,
  version_id integer NOT NULL CHECK (version_id >= 0),
  actor text,
  time timestamptz NOT NULL,
  comment text NOT NULL DEFAULT '',
  review_state text,
  creators text[] NOT NULL DEFAULT '{}',
  data jsonb NOT NULL,
  PRIMARY KEY (uid, version_id)
);
