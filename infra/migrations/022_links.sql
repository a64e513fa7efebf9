-- The links between objects by UID (blocks, rich text, a Link's remoteUrl: core/content/link-index.ts),
-- which @linkintegrity reads backwards: who links to what is about to be deleted. A source's rows are
-- written by the statement that writes the object and go with it (the cascade); a target is any UID,
-- kept when its object goes (a link to it stays broken, and counts again if nothing else has that UID).
CREATE TABLE links (
  source uuid NOT NULL REFERENCES content(uid) ON DELETE CASCADE,
  target uuid NOT NULL,
  PRIMARY KEY (source, target)
);
CREATE INDEX links_target ON links (target);
-- What objects already hold: every link by UID in their data (the write of each object keeps it from now on).
INSERT INTO links (source, target)
  SELECT DISTINCT c.uid, lower(m[1])::uuid
  FROM content c, regexp_matches(c.data::text, 'resolveuid/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})', 'g') AS m
ON CONFLICT DO NOTHING;
