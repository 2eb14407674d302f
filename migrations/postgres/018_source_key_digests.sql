-- Source keys are no longer kept in clear (the same change as SQLite's 016): a source is found by
-- the SHA-256 digest of its key (auth_key_hash, there since 001), and the key is shown once, when
-- made. What stays of it is its first four characters, to tell keys apart. A copy of the
-- database (a dump, a replica) then holds no inbound URL that works. The keys are blanked before
-- the column is dropped (a dropped column's values stay in the rows until they are rewritten);
-- the old row versions go at the next vacuum.
ALTER TABLE sources ADD COLUMN auth_key_hint text NOT NULL DEFAULT '';
UPDATE sources SET auth_key_hint = left(auth_key, 4), auth_key = '';
ALTER TABLE sources DROP COLUMN auth_key;
