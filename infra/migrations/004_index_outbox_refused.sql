-- Solr's message when it refused an object's document (a 400 for that
-- document, not an outage). The rows stay, so that the operation is not lost,
-- but the asynchronous relay leaves them alone instead of queueing a document
-- Solr will refuse again; a new operation for the object, or
-- `npm run solr -- retry`, sends it again.
ALTER TABLE index_outbox ADD COLUMN refused text;
