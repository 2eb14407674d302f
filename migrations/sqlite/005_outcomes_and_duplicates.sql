-- What became of each signal, findable fast, and the per-source duplicate guard.
--
-- A signal's status now says what the door decided, and stays so: the stored 'queued' means
-- accepted (the CHECK of 001 cannot change in place); a row with duplicate_of set is a
-- duplicate (answered as the signal it names, neither charged nor delivered). What the agents
-- did is counted from the deliveries.

-- The duplicate guard: 0 is off; a window of at most an hour.
ALTER TABLE sources ADD COLUMN duplicate_window_seconds INTEGER NOT NULL DEFAULT 0
  CHECK (duplicate_window_seconds BETWEEN 0 AND 3600);

-- The accepted signal a duplicate repeated.
ALTER TABLE signals ADD COLUMN duplicate_of TEXT;
-- SHA-256 hex of the raw body, kept only for signals accepted on a source with the guard on:
-- what a later request's body is compared with.
ALTER TABLE signals ADD COLUMN body_digest TEXT;
CREATE INDEX signals_body_digest ON signals (source_id, body_digest, received_at) WHERE body_digest IS NOT NULL;

-- The filters of the signal log, each with an index in log order, so a page reads about as
-- many rows as it shows whatever the log's size.
CREATE INDEX signals_status_log ON signals (status, received_at, id);
CREATE INDEX signals_duplicate_log ON signals (received_at, id) WHERE duplicate_of IS NOT NULL;
CREATE INDEX signals_symbol_log ON signals (json_extract(normalized, '$.symbol'), received_at, id);

-- The outcome filter walks the deliveries in a status in log order: each delivery carries its
-- signal's received_at.
ALTER TABLE deliveries ADD COLUMN received_at TEXT;
UPDATE deliveries SET received_at = (SELECT s.received_at FROM signals s WHERE s.id = deliveries.signal_id);
CREATE INDEX deliveries_outcome_log ON deliveries (status, received_at, signal_id);
