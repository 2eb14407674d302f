-- Signals per day of an account (the dashboard's chart): each day is counted as ranges of an
-- index, accepted ('queued') and rejected apart, less the duplicates (stored as 'queued', counted
-- as neither) found through their own small index (duplicate_of in it so SQLite need not read the
-- row to check it). 007's index put the status after the time,
-- so a count read every row of the days and the duplicate_of of each from the table.
DROP INDEX signals_account_days;
CREATE INDEX signals_account_days ON signals (account_id, status, received_at);
CREATE INDEX signals_account_duplicate_days ON signals (account_id, received_at, duplicate_of) WHERE duplicate_of IS NOT NULL;

-- A source's log filtered by status or by symbol: without these, the page walked the status's
-- or the symbol's index across every source looking for this one's rows (0.7 s on a log of a
-- million signals for one source's rejected ones). duplicate_of rides along so that telling
-- accepted from duplicate entries needs no table lookup.
CREATE INDEX signals_source_status_log ON signals (source_id, status, received_at, id, duplicate_of);
CREATE INDEX signals_source_symbol_log ON signals (source_id, json_extract(normalized, '$.symbol'), received_at, id);
-- A source's duplicates (rare: the index stays small and costs nothing to other inserts).
CREATE INDEX signals_source_duplicate_log ON signals (source_id, received_at, id) WHERE duplicate_of IS NOT NULL;
