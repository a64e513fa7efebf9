-- Plone's image scales (@@images), made on first request and kept: one row a
-- scale of an image field, `version` the image's (core/content/image/scales.ts),
-- so that a new upload's scale replaces the old one's row and no stale scale
-- is ever served. Gone with their object.
CREATE TABLE image_scales (
  uid uuid NOT NULL REFERENCES content(uid) ON DELETE CASCADE,
  field text NOT NULL,
  scale text NOT NULL,
  version text NOT NULL,
  content_type text NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (uid, field, scale)
);
