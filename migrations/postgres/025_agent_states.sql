-- An agent's reported account snapshot in a table of its own, no longer a column of its `agents`
-- row. That row is locked by every ingest that queues a delivery for the agent (its `last_seq`
-- numbers them), so a snapshot written there waited for those ingests, and every update of the
-- row (each ingest's `last_seq`, each presence write) copied the snapshot into the new row
-- version and the write-ahead log. Here a snapshot takes a key-share lock on the agent's row
-- (the foreign key), which an ingest's lock does not hold up, and the row stays small.
--
-- `agents.state` stays: an instance of the previous release, running during a rolling upgrade,
-- still writes it, and a reader uses it for an agent that has no row here. The snapshots written
-- until now are copied.
CREATE TABLE agent_states (
  agent_id text COLLATE "C" PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
  state    json NOT NULL,
  saved_at timestamptz NOT NULL
);
INSERT INTO agent_states (agent_id, state, saved_at)
  SELECT id, state, coalesce(last_seen_at, created_at) FROM agents WHERE state IS NOT NULL;
UPDATE agents SET state = NULL WHERE state IS NOT NULL;
