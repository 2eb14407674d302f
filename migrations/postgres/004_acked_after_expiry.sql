-- Whether a delivery was acknowledged when it had already expired (at or after expires_at): the
-- agent may have acted on a late signal, and the log must say so. Acknowledgements made before
-- this column existed are judged by their times.
ALTER TABLE deliveries ADD COLUMN acked_after_expiry boolean NOT NULL DEFAULT false;
UPDATE deliveries SET acked_after_expiry = true WHERE acked_at IS NOT NULL AND acked_at >= expires_at;
