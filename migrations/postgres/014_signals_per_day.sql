-- The chart of an account's signals per day reads a counter instead of the log (the same
-- change as SQLite's 012): one row per account and UTC day with its accepted and rejected
-- entries (duplicates count as neither), so the chart of 90 days reads at most 90 rows however
-- many signals the account sends. `signalgate_ingest` (functions.sql, revision 5) adds its
-- batch's counts in its transaction, one upsert per account and day per batch; the trigger
-- below takes deleted entries off, once per DELETE statement, so retention and a source's
-- removal (or any other deletion, by any release) keep the counter equal to what the log holds.
-- A row counted down to zero is removed; a count never goes below zero (see stores.md on the
-- instant of a rolling upgrade).
CREATE TABLE signals_per_day (
  account_id text COLLATE "C" NOT NULL REFERENCES accounts (id),
  day        date NOT NULL, -- the UTC day of received_at
  accepted   integer NOT NULL DEFAULT 0 CHECK (accepted >= 0),
  rejected   integer NOT NULL DEFAULT 0 CHECK (rejected >= 0),
  PRIMARY KEY (account_id, day)
);

CREATE FUNCTION signalgate_signals_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE signals_per_day p
     SET accepted = greatest(p.accepted - gone.accepted, 0), rejected = greatest(p.rejected - gone.rejected, 0)
    FROM (SELECT g.account_id, (g.received_at AT TIME ZONE 'UTC')::date AS day,
                 count(*) FILTER (WHERE g.status = 'queued' AND g.duplicate_of IS NULL) AS accepted,
                 count(*) FILTER (WHERE g.status = 'rejected') AS rejected
            FROM deleted_signals g
           WHERE g.status = 'rejected' OR (g.status = 'queued' AND g.duplicate_of IS NULL)
           GROUP BY 1, 2) AS gone
   WHERE p.account_id = gone.account_id AND p.day = gone.day;
  -- A second statement: one statement cannot delete a row it has updated.
  DELETE FROM signals_per_day p
   USING (SELECT DISTINCT g.account_id, (g.received_at AT TIME ZONE 'UTC')::date AS day FROM deleted_signals g) AS gone
   WHERE p.account_id = gone.account_id AND p.day = gone.day AND p.accepted = 0 AND p.rejected = 0;
  RETURN NULL;
END;
$$;

CREATE TRIGGER signals_per_day_on_delete AFTER DELETE ON signals
  REFERENCING OLD TABLE AS deleted_signals
  FOR EACH STATEMENT EXECUTE FUNCTION signalgate_signals_deleted();

-- The log as it is now. No ingest of this release writes to the log before the functions that
-- count (functions.sql) are in place.
INSERT INTO signals_per_day (account_id, day, accepted, rejected)
SELECT account_id, (received_at AT TIME ZONE 'UTC')::date,
       count(*) FILTER (WHERE status = 'queued' AND duplicate_of IS NULL), count(*) FILTER (WHERE status = 'rejected')
  FROM signals
 WHERE status = 'rejected' OR (status = 'queued' AND duplicate_of IS NULL)
 GROUP BY 1, 2;

-- Only the chart counted the duplicates from this index.
DROP INDEX signals_account_duplicate_days;
