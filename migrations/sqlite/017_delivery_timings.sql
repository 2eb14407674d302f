-- The agent's timings of a signal (decided, first order sent, the venue's answer, filled), kept
-- with its outcome so the signal log can show alert to order and alert to fill. Null for
-- acknowledgements made before this column existed and for agents that send none.
ALTER TABLE deliveries ADD COLUMN timings TEXT;
