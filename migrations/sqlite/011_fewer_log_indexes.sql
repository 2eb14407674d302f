-- Fewer indexes for every inbound signal to maintain. Each insert into the log updated seven
-- indexes besides the primary key; on a log of millions most of them insert at scattered
-- places (one run per source, account or symbol), so each costs a page read and write.
--
-- The dashboard's chart of signals per day of an account counts accepted and rejected entries
-- per source of the account, from the index a source's log filtered by status already has
-- (signals_source_status_log): an account's sources are few, and a source never changes
-- account. The account's own index goes. Its duplicates are still counted from their partial
-- index (signals_account_duplicate_days), which only duplicates, a small share, maintain.
DROP INDEX signals_account_days;

-- The log filtered by status: rejected entries are a small share of the log, so only they get an
-- index (a partial one, which accepted entries never touch); the accepted filter walks the
-- log's own index in order, where nearly every row matches, and duplicates keep their partial
-- index (signals_duplicate_log).
DROP INDEX signals_status_log;
CREATE INDEX signals_rejected_log ON signals (received_at, id) WHERE status = 'rejected';
