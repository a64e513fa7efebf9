-- Index operations waiting for Solr (SEARCH.md §5). A row is written in the
-- transaction of the content change and removed only after Solr accepted it,
-- so that no index update is lost when Solr is down. No foreign key: the
-- unindex of a deleted object must outlive its content row.
CREATE TABLE index_outbox (
  id bigserial PRIMARY KEY,
  uid uuid NOT NULL,
  op text NOT NULL CHECK (op IN ('index', 'unindex')),
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Failed deliveries of this row: an object Solr keeps refusing goes to the back of the queue.
  attempts integer NOT NULL DEFAULT 0
);
CREATE INDEX index_outbox_uid ON index_outbox (uid, id);
