-- A request whose Idempotency-Key is held, within the replay window, by a different request is
-- kept in the signal log as a refusal of its own: the item gains `key_reused_detail`, the detail
-- recorded for it with `{signal}` standing for the original's id.
ALTER TYPE signalgate_ingest_item ADD ATTRIBUTE key_reused_detail text;

-- As released, this migration also defined the ingest functions. Their one definition is now
-- migrations/postgres/functions.sql, which every migrate applies after the numbered migrations,
-- so that part was taken out: a database that applied this file as released gets the current
-- definitions at its next migrate, like one migrated from empty.
