-- Signals per day of an account (the dashboard's chart) counted from one index alone (an
-- index-only scan): the count reads duplicate_of too (a duplicate is neither accepted nor
-- rejected), which 009's index lacked, so every row of the range was read from the table.
DROP INDEX signals_account_days;
CREATE INDEX signals_account_days ON signals (account_id, received_at, status, duplicate_of);
