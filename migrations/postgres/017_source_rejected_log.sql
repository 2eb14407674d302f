-- One index fewer for every inbound signal to maintain (the same change as SQLite's 015, and as
-- 013 made for the whole log): a source's rejected entries get a partial index that accepted
-- inserts never touch, and a source's accepted entries are read from the source's own log
-- index, where nearly every row matches. Since 014 the chart reads its per-day counter, so only
-- the log's source-and-status filter read signals_source_status_log.
DROP INDEX signals_source_status_log;
CREATE INDEX signals_source_rejected_log ON signals (source_id, received_at, id) WHERE status = 'rejected';
