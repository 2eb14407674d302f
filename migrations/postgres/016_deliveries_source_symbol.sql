-- A page with an outcome and a source or a symbol (a source's failed deliveries, executed signals
-- for a symbol) had to meet two indexes: the source's (or symbol's) signals in log order and the
-- deliveries in that status in log order. Which of the two is sparser in the newest part of the
-- log decides what such a page costs, and the planner's statistics do not say it: at 10 M signals
-- some pages read tens of thousands of index entries for a page of 50. Each delivery now carries
-- its signal's source and symbol (as it carries its received_at, 007), and an index per source or
-- symbol and status in log order serves those pages alone: a page reads about as many deliveries
-- as it shows. The ingest writes both columns with the delivery (functions.sql).
ALTER TABLE deliveries ADD COLUMN source_id text COLLATE "C", ADD COLUMN symbol text;
UPDATE deliveries d SET source_id = s.source_id, symbol = s.symbol FROM signals s WHERE s.id = d.signal_id;
ALTER TABLE deliveries ALTER COLUMN source_id SET NOT NULL;
CREATE INDEX deliveries_source_outcome_log ON deliveries (source_id, status, received_at, signal_id);
CREATE INDEX deliveries_symbol_outcome_log ON deliveries (symbol, status, received_at, signal_id);
