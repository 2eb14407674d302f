-- One index fewer for every inbound signal to maintain (the same change as 011 made for the
-- whole log). A source's log filtered by status was read from signals_source_status_log
-- (source_id, status, received_at, id, duplicate_of), which every insert into the log updated,
-- at about 2–6 µs of CPU per inbound request on one core (docs/decisions/0006-signal-log-indexes.md).
-- Since 012 the chart reads its per-day counter, so only that filter read it. Rejected entries
-- are a small share of a source's log: they get a partial index that accepted inserts never
-- touch; a source's accepted entries are read from the source's own log index, where nearly
-- every row matches; its duplicates keep signals_source_duplicate_log.
DROP INDEX signals_source_status_log;
CREATE INDEX signals_source_rejected_log ON signals (source_id, received_at, id) WHERE status = 'rejected';
