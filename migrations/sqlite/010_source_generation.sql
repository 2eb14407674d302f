-- A counter that every change to `sources` moves (by trigger, so the CLI's changes move it too).
-- The inbound thread caches the sources it found, and used to drop that cache whenever
-- `PRAGMA data_version` said another connection had committed; the event loop's connection
-- commits the agents' hand-outs and acks many times a second, so under load the cache was
-- dropped every turn and every request looked its key up again. It is now dropped only when
-- this counter moved.
CREATE TABLE source_generation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  generation INTEGER NOT NULL
) STRICT;
INSERT INTO source_generation (id, generation) VALUES (1, 0);
CREATE TRIGGER sources_inserted AFTER INSERT ON sources BEGIN
  UPDATE source_generation SET generation = generation + 1 WHERE id = 1;
END;
CREATE TRIGGER sources_updated AFTER UPDATE ON sources BEGIN
  UPDATE source_generation SET generation = generation + 1 WHERE id = 1;
END;
CREATE TRIGGER sources_deleted AFTER DELETE ON sources BEGIN
  UPDATE source_generation SET generation = generation + 1 WHERE id = 1;
END;
