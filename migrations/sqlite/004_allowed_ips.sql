-- The client addresses a source takes inbound requests from: a JSON array of IPv4/IPv6
-- addresses, CIDR ranges and the word 'tradingview'; empty means any address.
ALTER TABLE sources ADD COLUMN allowed_ips TEXT NOT NULL DEFAULT '[]';
