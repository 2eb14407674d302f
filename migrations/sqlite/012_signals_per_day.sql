-- The chart of an account's signals per day reads a counter instead of the log: one row per
-- account and UTC day with its accepted and rejected entries (duplicates count as neither), so
-- the chart of 90 days reads at most 90 rows however many signals the account sends. The ingest
-- adds its batch's counts in the batch's transaction (one write per account and day per batch,
-- not per signal); the trigger below takes deleted entries off, so retention and a source's
-- removal (or any other deletion) keep the counter equal to what the log holds. A row counted
-- down to zero is removed.
CREATE TABLE signals_per_day (
  account_id TEXT NOT NULL REFERENCES accounts (id),
  day        TEXT NOT NULL, -- 'YYYY-MM-DD', the UTC day of received_at
  accepted   INTEGER NOT NULL DEFAULT 0 CHECK (accepted >= 0),
  rejected   INTEGER NOT NULL DEFAULT 0 CHECK (rejected >= 0),
  PRIMARY KEY (account_id, day)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER signals_per_day_on_delete AFTER DELETE ON signals
WHEN old.status = 'rejected' OR (old.status = 'queued' AND old.duplicate_of IS NULL)
BEGIN
  UPDATE signals_per_day
     SET accepted = max(accepted - (old.status = 'queued'), 0), rejected = max(rejected - (old.status = 'rejected'), 0)
   WHERE account_id = old.account_id AND day = substr(old.received_at, 1, 10);
  DELETE FROM signals_per_day
   WHERE account_id = old.account_id AND day = substr(old.received_at, 1, 10) AND accepted = 0 AND rejected = 0;
END;

-- The log as it is now (received_at is kept as 'YYYY-MM-DDTHH:MM:SS.sssZ').
INSERT INTO signals_per_day (account_id, day, accepted, rejected)
SELECT account_id, substr(received_at, 1, 10),
       sum(status = 'queued' AND duplicate_of IS NULL), sum(status = 'rejected')
  FROM signals
 WHERE status = 'rejected' OR (status = 'queued' AND duplicate_of IS NULL)
 GROUP BY account_id, substr(received_at, 1, 10);

-- Only the chart counted the duplicates from this index.
DROP INDEX signals_account_duplicate_days;
