-- Signals an instance of the previous release ingested during the rolling upgrade to 007 were
-- stored without their symbol (that release's items had no such field), so the log's symbol
-- filter missed them. The ingest function now reads a missing symbol from the normalized JSON
-- itself; this fills in the rows already stored, as 007's backfill did.
UPDATE signals SET symbol = substring(normalized::text from '"symbol":"([^"\\]*)"')
 WHERE symbol IS NULL AND normalized IS NOT NULL;
