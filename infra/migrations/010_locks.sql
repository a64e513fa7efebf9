-- Locks of content being edited (plone.locking, as Volto's edit form takes
-- them through @lock): one a content object, gone with it. A lock past its
-- timeout counts as no lock (core/content/locks.ts).
CREATE TABLE locks (
  uid uuid PRIMARY KEY REFERENCES content (uid) ON DELETE CASCADE,
  token text NOT NULL,
  creator text NOT NULL,
  created timestamptz NOT NULL,
  timeout integer NOT NULL CHECK (timeout > 0),
  stealable boolean NOT NULL DEFAULT true
);
