-- Fewer indexes for every inbound signal to maintain (the same change as SQLite's 011). The
-- chart of signals per day of an account counts accepted and rejected entries per source of
-- the account, from the index of a source's log by status (signals_source_status_log), and its
-- duplicates from their partial index as before; the log's status filter keeps a partial index
-- of rejected entries only, and the accepted filter walks the log's own index, where nearly
-- every row matches.
DROP INDEX signals_account_days;
DROP INDEX signals_status_log;
CREATE INDEX signals_rejected_log ON signals (received_at, id) WHERE status = 'rejected';
