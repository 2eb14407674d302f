-- A counter that moves whenever an agent's identity can have changed: its token rotated, the
-- agent deleted or renamed (by trigger, so the CLI's changes move it too). The event loop keeps
-- the agents it found by token in memory and reads this counter on every lookup, a one-row read,
-- instead of the agent's row (its reported state included); the cache is dropped when it moved.
-- Hand-outs, acks, presence and state reports write other columns and leave it alone.
CREATE TABLE agent_token_generation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  generation INTEGER NOT NULL
) STRICT;
INSERT INTO agent_token_generation (id, generation) VALUES (1, 0);
CREATE TRIGGER agents_identity_updated AFTER UPDATE OF id, account_id, name, token_hash ON agents BEGIN
  UPDATE agent_token_generation SET generation = generation + 1 WHERE id = 1;
END;
CREATE TRIGGER agents_deleted AFTER DELETE ON agents BEGIN
  UPDATE agent_token_generation SET generation = generation + 1 WHERE id = 1;
END;
