-- Source keys are no longer kept in clear: a source is found by the SHA-256 digest of its key
-- (auth_key_hash, there since 001), and the key is shown once, when made. What stays of it is its
-- first four characters, to tell keys apart. A copy of the database (a backup, a stolen disk)
-- then holds no inbound URL that works. secure_delete zeroes the bytes the keys leave free in
-- their pages (SQLite may otherwise leave them as they were); it is set back for the rest of the run.
PRAGMA secure_delete = ON;
ALTER TABLE sources ADD COLUMN auth_key_hint TEXT NOT NULL DEFAULT '';
UPDATE sources SET auth_key_hint = substr(auth_key, 1, 4), auth_key = '';
ALTER TABLE sources DROP COLUMN auth_key;
PRAGMA secure_delete = OFF;
