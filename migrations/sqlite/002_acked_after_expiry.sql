-- Whether a delivery was acknowledged when it had already expired (at or after expires_at):
-- the agent may have acted on a late signal, and the log must say so. Acknowledgements made
-- before this column existed are judged by their times.
ALTER TABLE deliveries ADD COLUMN acked_after_expiry INTEGER NOT NULL DEFAULT 0 CHECK (acked_after_expiry IN (0, 1));
UPDATE deliveries SET acked_after_expiry = 1 WHERE acked_at IS NOT NULL AND acked_at >= expires_at;
