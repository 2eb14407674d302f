-- The client addresses a source takes inbound requests from: a JSON array of IPv4/IPv6
-- addresses, CIDR ranges and the word 'tradingview'; empty means any address. A change of it
-- counts up the source's revision like any other change (migration 005).
ALTER TABLE sources ADD COLUMN allowed_ips json NOT NULL DEFAULT '[]';
