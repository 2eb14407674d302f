-- Signals per day of an account (the dashboard's chart) counted from one index alone: the count
-- reads duplicate_of too (a duplicate is neither accepted nor rejected), which 007's index
-- lacked, so every row of the range was looked up in the table (about 15 ms per 10,000 signals).
DROP INDEX signals_account_days;
CREATE INDEX signals_account_days ON signals (account_id, received_at, status, duplicate_of);

-- A source's log filtered by status or by symbol: without these, the page walked the status's
-- or the symbol's index across every source looking for this one's rows (0.7 s on a log of a
-- million signals for one source's rejected ones). duplicate_of rides along so that telling
-- accepted from duplicate entries needs no table lookup.
CREATE INDEX signals_source_status_log ON signals (source_id, status, received_at, id, duplicate_of);
CREATE INDEX signals_source_symbol_log ON signals (source_id, json_extract(normalized, '$.symbol'), received_at, id);
-- A source's duplicates (rare: the index stays small and costs nothing to other inserts).
CREATE INDEX signals_source_duplicate_log ON signals (source_id, received_at, id) WHERE duplicate_of IS NOT NULL;
