-- The expiry sweep finds queued deliveries past their deadline through this index: it reads
-- only what is due, however many deliveries the table holds.
CREATE INDEX deliveries_due ON deliveries (expires_at) WHERE status = 'queued';
