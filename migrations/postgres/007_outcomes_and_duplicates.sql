-- What became of each signal, findable fast, and the per-source duplicate guard.
--
-- A signal's status now says what the door decided, and stays so: the stored 'queued' means
-- accepted (kept as it is, so no row of a large log is rewritten); a row with duplicate_of set
-- is a duplicate (answered as the signal it names, neither charged nor delivered). What the
-- agents did is counted from the deliveries.

-- The duplicate guard: 0 is off; a window of at most an hour.
ALTER TABLE sources ADD COLUMN duplicate_window_seconds integer NOT NULL DEFAULT 0
  CHECK (duplicate_window_seconds BETWEEN 0 AND 3600);

-- The accepted signal a duplicate repeated.
ALTER TABLE signals ADD COLUMN duplicate_of text COLLATE "C";
-- SHA-256 hex of the raw body, kept only for signals accepted on a source with the guard on:
-- what a later request's body is compared with.
ALTER TABLE signals ADD COLUMN body_digest text;
CREATE INDEX signals_body_digest ON signals (source_id, body_digest, received_at) WHERE body_digest IS NOT NULL;

-- The filters of the signal log, each with an index in log order, so a page reads about as
-- many rows as it shows whatever the log's size.
CREATE INDEX signals_status_log ON signals (status, received_at, id);
CREATE INDEX signals_duplicate_log ON signals (received_at, id) WHERE duplicate_of IS NOT NULL;
-- The symbol gets a column: an index on normalized ->> 'symbol' would fail every insert whose
-- signal holds a \u0000 escape (PostgreSQL de-escapes the whole value to read one field). A
-- symbol holds no quote or backslash, and the normalized JSON is written without spaces, so
-- the backfill can read it from the text.
ALTER TABLE signals ADD COLUMN symbol text;
UPDATE signals SET symbol = substring(normalized::text from '"symbol":"([^"\\]*)"') WHERE normalized IS NOT NULL;
CREATE INDEX signals_symbol_log ON signals (symbol, received_at, id);

-- The outcome filter walks the deliveries in a status in log order: each delivery carries its
-- signal's received_at.
ALTER TABLE deliveries ADD COLUMN received_at timestamptz;
UPDATE deliveries d SET received_at = s.received_at FROM signals s WHERE s.id = d.signal_id;
CREATE INDEX deliveries_outcome_log ON deliveries (status, received_at, signal_id);

-- The item of signalgate_ingest carries the duplicate check: the body's digest and the start of
-- the window (both null when the source's guard is off); and the signal's symbol.
ALTER TYPE signalgate_ingest_item ADD ATTRIBUTE body_digest text;
ALTER TYPE signalgate_ingest_item ADD ATTRIBUTE duplicate_since timestamptz;
ALTER TYPE signalgate_ingest_item ADD ATTRIBUTE symbol text;
