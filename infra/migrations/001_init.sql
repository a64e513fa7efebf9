-- Key/value settings: the generated JWT secret, control-panel values, editable vocabularies.
CREATE TABLE settings (
  key text PRIMARY KEY,
  value jsonb NOT NULL
);

CREATE TABLE users (
  id text PRIMARY KEY,
  email text,
  fullname text,
  password_hash text NOT NULL,
  roles text[] NOT NULL DEFAULT '{}',
  created timestamptz NOT NULL DEFAULT now()
);

-- Tokens revoked by @logout / @login-renew, until they would have expired anyway.
CREATE TABLE revoked_tokens (
  token_hash text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);

-- The content tree. Every schema field lives in `data`; the columns are what
-- traversal, security and the workflow need.
CREATE TABLE content (
  uid uuid PRIMARY KEY,
  parent_uid uuid REFERENCES content(uid) ON DELETE CASCADE,
  id text NOT NULL,
  path text NOT NULL UNIQUE,
  portal_type text NOT NULL,
  review_state text,
  owner text,
  creators text[] NOT NULL DEFAULT '{}',
  local_roles jsonb NOT NULL DEFAULT '{}',
  position integer NOT NULL DEFAULT 0,
  created timestamptz NOT NULL,
  modified timestamptz NOT NULL,
  data jsonb NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX content_parent_id ON content (parent_uid, id);

-- Binary fields (images), kept out of `data` so that reads of an object do not load them.
CREATE TABLE blobs (
  uid uuid NOT NULL REFERENCES content(uid) ON DELETE CASCADE,
  field text NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (uid, field)
);

CREATE TABLE workflow_history (
  uid uuid NOT NULL REFERENCES content(uid) ON DELETE CASCADE,
  seq integer NOT NULL,
  action text,
  actor text,
  comments text NOT NULL DEFAULT '',
  review_state text NOT NULL,
  time timestamptz NOT NULL,
  PRIMARY KEY (uid, seq)
);

-- The catalogue. Its index columns are derived from the index declarations
-- (core/indexes.ts and each content type) and added at start; see core/catalog-ddl.ts.
CREATE TABLE catalog (
  uid uuid PRIMARY KEY REFERENCES content(uid) ON DELETE CASCADE,
  searchable tsvector
);
CREATE INDEX catalog_searchable ON catalog USING gin (searchable);
