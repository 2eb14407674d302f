-- How many changes a source has had. An inbound request is checked (active, key, HMAC secret,
-- max age) before its batch's transaction and committed only while the source still has the
-- revision it was checked against; otherwise it is checked again against the source as it is.
ALTER TABLE sources ADD COLUMN revision INTEGER NOT NULL DEFAULT 0 CHECK (revision >= 0);
