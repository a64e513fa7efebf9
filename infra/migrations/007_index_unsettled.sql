-- Objects whose latest documents Solr has accepted but may not show yet
-- (delivered with commitWithin, or left to Solr's autoCommit), until when.
-- With the outbox, they are what Solr may still show as it was: searches
-- leave out those the caller may no longer see (core/solr/search.ts).
CREATE TABLE index_unsettled (
  uid uuid PRIMARY KEY,
  settles_at timestamptz NOT NULL
);
CREATE INDEX index_unsettled_settles_at ON index_unsettled (settles_at);
