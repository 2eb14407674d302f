-- A change of a source (deactivation, key rotation, HMAC secret, max age) and the inbound
-- requests checked against it are ordered: each source gets a revision, counted up by every
-- change, and the item carries the revision the request was checked against (`source_revision`),
-- which `signalgate_ingest_items` compares before it writes anything.
ALTER TABLE sources ADD COLUMN revision integer NOT NULL DEFAULT 0 CHECK (revision >= 0);
ALTER TYPE signalgate_ingest_item ADD ATTRIBUTE source_revision integer;

-- As released, this migration also defined the ingest functions. Their one definition is now
-- migrations/postgres/functions.sql, which every migrate applies after the numbered migrations,
-- so that part was taken out: a database that applied this file as released gets the current
-- definitions at its next migrate, like one migrated from empty.
