-- Named leases (src/store/leases.ts): work done once across instances (the notifications'
-- watches) is done by the holder of its lease until `until`, renewed while it lives.
CREATE TABLE leases (
  name   TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  until  TEXT NOT NULL
);
