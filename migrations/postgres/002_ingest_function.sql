-- The type of one item of `signalgate_ingest` (the inbound hot path as one server-side call, see
-- migrations/postgres/functions.sql): the fields of one inbound request as the batch carries them.
CREATE TYPE signalgate_ingest_item AS (
  n                 integer,
  id                text,
  source_id         text,
  account_id        text,
  received_at       timestamptz,
  period            text,
  content_type      text,
  raw_body          text,
  idempotency_key   text,
  request_hash      text,
  idempotency_since timestamptz,
  accept            boolean,
  normalized        text,
  expires_at        timestamptz,
  http_status       integer,
  code              text,
  detail            text,
  param             text,
  errors            text
);

-- As released, this migration also defined the ingest functions. Their one definition is now
-- migrations/postgres/functions.sql, which every migrate applies after the numbered migrations,
-- so that part was taken out: a database that applied this file as released gets the current
-- definitions at its next migrate, like one migrated from empty.
