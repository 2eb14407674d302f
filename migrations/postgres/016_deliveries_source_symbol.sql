-- A page with an outcome and a source or a symbol (a source's failed deliveries, executed signals
-- for a symbol) had to meet two indexes: the source's (or symbol's) signals in log order and the
-- deliveries in that status in log order. Which of the two is sparser in the newest part of the
-- log decides what such a page costs, and the planner's statistics do not say it: at 10 M signals
-- some pages read tens of thousands of index entries for a page of 50. Each delivery now carries
-- its signal's source and symbol (as it carries its received_at, 007), and an index per source or
-- symbol and status in log order serves those pages alone: a page reads about as many deliveries
-- as it shows. The ingest writes both columns with the delivery (functions.sql).
--
-- The table is written anew rather than updated in place: an UPDATE of every delivery left a new
-- version of each row and an entry for it in every index, one row at a time (on a copy of a
-- 10 M-signal store it had not done half of 11.4 M deliveries after 25 minutes), where a copy
-- joined to the signals is one pass and each index one sort. The new table gets the old one's
-- columns, defaults and checks (LIKE), then its keys and indexes under their old names.
SET LOCAL maintenance_work_mem = '256MB';
CREATE TABLE deliveries_016 (LIKE deliveries INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE deliveries_016 ADD COLUMN source_id text COLLATE "C" NOT NULL, ADD COLUMN symbol text;
INSERT INTO deliveries_016 SELECT d.*, s.source_id, s.symbol FROM deliveries d JOIN signals s ON s.id = d.signal_id;
DROP TABLE deliveries;
ALTER TABLE deliveries_016 RENAME TO deliveries;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_pkey PRIMARY KEY (signal_id, agent_id);
ALTER TABLE deliveries ADD CONSTRAINT deliveries_agent_id_seq_key UNIQUE (agent_id, seq);
ALTER TABLE deliveries ADD CONSTRAINT deliveries_signal_id_fkey FOREIGN KEY (signal_id) REFERENCES signals (id);
ALTER TABLE deliveries ADD CONSTRAINT deliveries_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES agents (id);
-- The indexes 001, 007, 010 and 015 made, as they made them.
CREATE INDEX deliveries_pending ON deliveries (agent_id, seq) WHERE status IN ('queued', 'delivered');
CREATE INDEX deliveries_outcome_log ON deliveries (status, received_at, signal_id);
CREATE INDEX deliveries_due ON deliveries (expires_at) WHERE status = 'queued';
CREATE INDEX deliveries_agent_due ON deliveries (agent_id, expires_at) WHERE status IN ('queued', 'delivered');
CREATE INDEX deliveries_source_outcome_log ON deliveries (source_id, status, received_at, signal_id);
CREATE INDEX deliveries_symbol_outcome_log ON deliveries (symbol, status, received_at, signal_id);
-- A new table has no statistics until autovacuum's next look: the pages would be planned blind.
ANALYZE deliveries;
