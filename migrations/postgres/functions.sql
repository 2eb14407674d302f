-- The server-side functions of the PostgreSQL store, as they are now: the one place their rules
-- are written. Unlike the numbered migrations (schema changes, each applied once), this file is
-- applied by every migrate, after the numbered migrations, in the same transaction and under the
-- same advisory lock, with CREATE OR REPLACE. So a database at any earlier schema ends up with
-- exactly these definitions. The numbered migrations 002, 003 and 005 of earlier releases also
-- defined these functions; whatever they left is replaced here.
--
-- A change here keeps the call signatures (an instance of the previous release may still be
-- running during a rolling upgrade, calling them as it did) and counts up the revision in the
-- COMMENT at the end: migrate never replaces functions of a higher revision, so an older
-- instance that restarts does not undo a newer instance's functions. A change that needs a
-- new column or item field puts it in a new numbered migration.
--
-- The inbound hot path as one server-side call. `signalgate_ingest` records a batch of inbound
-- requests, in the order given, each in the store's ingest rules: check the source's revision,
-- claim the idempotency key (or answer from the request holding it), charge the quota (the
-- account's usage row locked at its first charge, counted here, written once per batch), insert
-- the signal, release the key on a 429, queue the deliveries; and, once per account and UTC day
-- per batch, add the batch's accepted and rejected entries to the chart's counter
-- (`signals_per_day`, migration 014, whose trigger takes deleted entries off). It runs as one statement, so the
-- whole batch is one (implicit) transaction and one round trip; row locks (the account's usage
-- row above all) are held for the function's run and the COMMIT, not across client round trips.
--
-- items: a JSON array of objects with the fields of the type `signalgate_ingest_item`; `n` is the
-- item's position, answered back. `raw_body` is base64; `normalized` and `errors` are JSON texts
-- (a JSON string decoded by PostgreSQL may not hold \u0000, an escape inside it may). For
-- `accept` items, http_status/code/detail/param/errors describe the 429 refusal recorded when
-- the quota is used up; for the others, the rejection recorded. With an idempotency key,
-- `key_reused_detail` is the detail recorded when a different request holds the key, `{signal}`
-- standing for that request's id. `source_revision` is the revision of the source the request
-- was checked against; an item without it comes from an instance older than that column (a
-- rolling upgrade) and is not compared. `body_digest` and `duplicate_since` are the source's
-- duplicate guard (both null when it is off): an accept item is logged as a duplicate when the
-- source's latest accepted signal at or after `duplicate_since` has the same body digest (a
-- repeat of the signal just before it, so close, open, close executes every close). An item with
-- a digest and no `duplicate_since` cannot be a repeat (a close, a cancel, a position target:
-- applied twice they change nothing); its digest is only kept, for the next item to compare.
-- `symbol` is the normalized signal's (accept only), kept in its own column for the log's filter.
-- An instance of a release before that field (a rolling upgrade) sends no `symbol`: it is then read
-- from the normalized JSON text (written without spaces; a symbol holds no quote or backslash),
-- so the symbol filter finds its signals too.
--
-- Answers a JSON array, in item order, of
--   {n, ok: true, kind: 'recorded', charged, used, limit, agents}   -- a new log entry
--   {n, ok: true, kind: 'replay', record, outcome}                  -- record: the original signals row;
--                                                                   -- outcome: its deliveries by status
--   {n, ok: true, kind: 'duplicate', record, outcome}               -- logged as a duplicate of record
--   {n, ok: true, kind: 'key_reused', original}                     -- logged as its own 422 refusal;
--                                                                   -- original: the id holding the key
--   {n, ok: false, state: 'source_changed', message}                -- checked against another revision
--   {n, ok: false, state, message}                                  -- nothing of it was kept (a SQLSTATE)

-- How many of a signal's deliveries are in each status, e.g. {"executed": 1}; {} for none.
CREATE OR REPLACE FUNCTION signalgate_outcome(signal_id text) RETURNS json
LANGUAGE sql STABLE AS $$
  SELECT coalesce(json_object_agg(c.status, c.n), '{}'::json)
    FROM (SELECT d.status, count(*) AS n FROM deliveries d WHERE d.signal_id = $1 GROUP BY d.status) c
$$;

-- The log entries of items that went the whole way (recorded: accepted, or refused by their
-- verdict or the quota) and their deliveries, in item order: one INSERT per table for many items.
-- items[i] is written as accepted when charged[i], with used[i] and limits[i] as its quota and
-- symbols[i] as its symbol; delivery k is of items[dl_items[k]], to dl_agents[k] at dl_seqs[k].
-- risks[i] is items[i]'s effective risk rules (JSON text, migration 021), kept when it is accepted;
-- dl_statuses[k] is delivery k's status: 'queued', or 'halted' for an agent halted at the door.
CREATE OR REPLACE FUNCTION signalgate_ingest_write(items signalgate_ingest_item[], charged boolean[], used integer[],
                                                   limits integer[], symbols text[], dl_items integer[],
                                                   dl_agents text[], dl_seqs integer[], risks text[],
                                                   dl_statuses text[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, code, detail, param,
                       errors, content_type, raw_body, normalized, idempotency_key, quota_period,
                       quota_used, quota_limit, body_digest, symbol, risk)
  SELECT it.id, it.source_id, it.account_id, it.received_at,
         CASE WHEN charged[it.ordinality] THEN 'queued' ELSE 'rejected' END,
         CASE WHEN charged[it.ordinality] THEN 202 ELSE it.http_status END,
         CASE WHEN charged[it.ordinality] THEN NULL ELSE it.code END,
         CASE WHEN charged[it.ordinality] THEN NULL ELSE it.detail END,
         CASE WHEN charged[it.ordinality] THEN NULL ELSE it.param END,
         CASE WHEN charged[it.ordinality] THEN NULL ELSE it.errors::json END,
         it.content_type, decode(it.raw_body, 'base64'),
         CASE WHEN charged[it.ordinality] THEN it.normalized::json END,
         it.idempotency_key,
         CASE WHEN charged[it.ordinality] THEN it.period END, used[it.ordinality], limits[it.ordinality],
         CASE WHEN charged[it.ordinality] THEN it.body_digest END,
         CASE WHEN charged[it.ordinality] THEN symbols[it.ordinality] END,
         CASE WHEN charged[it.ordinality] THEN risks[it.ordinality] END
    FROM unnest(items) WITH ORDINALITY AS it
   ORDER BY it.ordinality;
  IF cardinality(dl_items) > 0 THEN
    -- Each delivery carries its signal's source, symbol and received_at: the outcome filter's
    -- indexes (migrations 007, 016).
    INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, attempts, received_at, source_id, symbol)
    SELECT (items[d.item]).id, d.agent_id, d.seq, d.status, (items[d.item]).expires_at, 0,
           (items[d.item]).received_at, (items[d.item]).source_id, symbols[d.item]
      FROM unnest(dl_items, dl_agents, dl_seqs, dl_statuses) WITH ORDINALITY AS d(item, agent_id, seq, status, k)
     ORDER BY d.k;
  END IF;
END;
$$;

-- The items in order, without subtransactions. A request that names an unknown source (or one
-- of another account), or that was checked against another revision of its source, is
-- answered as an error before it wrote anything. The source is read under a key-share lock,
-- which a change of the source (SELECT ... FOR UPDATE) waits for and which waits for a change,
-- so no change can commit between the revision comparison and the item's COMMIT. Any other
-- error aborts the whole call. Answers the outcomes as above, and the agents to notify.
CREATE OR REPLACE FUNCTION signalgate_ingest_items(items json, OUT outcomes json[], OUT agents text[])
LANGUAGE plpgsql AS $$
DECLARE
  it signalgate_ingest_item;
  v_source record;
  v_held record;
  v_routed text[];
  v_charged boolean;
  v_used integer;
  v_limit integer;
  v_agents text[];
  v_agent record;
  v_at integer;
  -- Agents whose rows this call locked, and the last sequence number each has handed out.
  v_seq_agents text[] := '{}';
  v_seq_last integer[] := '{}';
  v_original json;
  v_outcome json;
  v_claims integer;
  v_repeated text;
  -- Sources this call has read (and key-share locked), by position: a later item of the same
  -- source reuses the row, which no change can alter while the lock is held.
  v_src_ids text[] := '{}';
  v_src_accounts text[] := '{}';
  v_src_agents json[] := '{}';
  v_src_revisions integer[] := '{}';
  -- The agents each of those sources routes to (locked, in id order), read at the source's
  -- first charged item: v_route_agents[from:to]. Later items of the source reuse the list (see
  -- the deliveries below).
  v_src_at integer;
  v_src_route_from integer[] := '{}';
  v_src_route_to integer[] := '{}';
  -- The routes' agents one after the other, and each one's position in v_seq_agents.
  v_route_agents text[] := '{}';
  v_route_seq_at integer[] := '{}';
  -- Usage rows this call has locked, by position (account, period): the count and limit read
  -- under the lock, and how many this call charged, written once at the end.
  v_use_accounts text[] := '{}';
  v_use_periods text[] := '{}';
  v_use_used integer[] := '{}';
  v_use_limits integer[] := '{}';
  v_use_charged integer[] := '{}';
  -- The entries this call logged, for the per-day counter (duplicates are not counted): the
  -- account, the UTC day, and whether it was a rejection; written once at the end.
  v_log_accounts text[] := '{}';
  v_log_days date[] := '{}';
  v_log_rejected boolean[] := '{}';
  v_symbol text;
  -- Log entries and deliveries not written yet, in item order: written by one INSERT per table
  -- at the end, or before an item that reads the log (an idempotency key, the duplicate guard).
  v_pend_items signalgate_ingest_item[] := '{}';
  v_pend_charged boolean[] := '{}';
  v_pend_used integer[] := '{}';
  v_pend_limits integer[] := '{}';
  v_pend_symbols text[] := '{}';
  v_dl_items integer[] := '{}';
  v_dl_agents text[] := '{}';
  v_dl_seqs integer[] := '{}';
  v_pend_risks text[] := '{}';
  v_dl_statuses text[] := '{}';
  -- Risk (migration 021): per source read, whether its account or itself is halted and the
  -- effective rules its signals carry; the agents halted one by one, read once per call.
  v_src_halted boolean[] := '{}';
  v_src_risks text[] := '{}';
  v_halted_agents text[];
  v_item_halted text[];
BEGIN
  outcomes := '{}';
  agents := '{}';
  -- Shared against a halt's exclusive hold (src/store/postgres/risk.ts): a halt waits for this
  -- call's COMMIT, and a call that starts after a halt's COMMIT reads it below (each statement
  -- here takes a new snapshot).
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('signalgate.risk' || chr(10) || current_schema(), 0));
  v_halted_agents := ARRAY(SELECT h.target_id::text FROM risk_halts h WHERE h.scope = 'agent' AND h.released_at IS NULL);
  FOR it IN SELECT * FROM json_populate_recordset(NULL::signalgate_ingest_item, items) ORDER BY n LOOP
    v_outcome := NULL;
    <<item>>
    BEGIN
      -- The key-share lock waits for a change of the source in progress (it takes FOR UPDATE)
      -- and then reads the changed row; once held, it keeps any change waiting until COMMIT.
      -- Read once per source per call: the lock is held to COMMIT, so the row read first is the
      -- row every later item of the source would read.
      v_src_at := array_position(v_src_ids, it.source_id);
      IF v_src_at IS NULL THEN
        SELECT s.account_id, s.agent_ids, s.revision INTO v_source FROM sources s WHERE s.id = it.source_id
           FOR KEY SHARE;
        IF NOT FOUND THEN
          v_outcome := json_build_object('n', it.n, 'ok', false, 'state', 'P0002',
                                         'message', format('no source %s', it.source_id));
          EXIT item;
        END IF;
        v_src_ids := v_src_ids || it.source_id;
        v_src_accounts := v_src_accounts || v_source.account_id;
        v_src_agents := v_src_agents || v_source.agent_ids;
        v_src_revisions := v_src_revisions || v_source.revision;
        v_src_halted := v_src_halted || EXISTS (
          SELECT 1 FROM risk_halts h WHERE h.released_at IS NULL
             AND ((h.scope = 'account' AND h.target_id = v_source.account_id)
               OR (h.scope = 'source' AND h.target_id = it.source_id)));
        v_src_risks := v_src_risks || (
          SELECT r.effective FROM risk_rules r
           WHERE (r.scope = 'source' AND r.id = it.source_id) OR (r.scope = 'account' AND r.id = v_source.account_id)
           ORDER BY r.scope DESC LIMIT 1);
        v_src_at := cardinality(v_src_ids);
      ELSE
        SELECT v_src_accounts[v_src_at] AS account_id, v_src_agents[v_src_at] AS agent_ids,
               v_src_revisions[v_src_at] AS revision
          INTO v_source;
      END IF;
      IF v_source.account_id IS DISTINCT FROM it.account_id THEN
        v_outcome := json_build_object('n', it.n, 'ok', false, 'state', 'P0001',
                                       'message', format('source %s does not belong to account %s',
                                                         it.source_id, it.account_id));
        EXIT item;
      END IF;
      IF it.source_revision IS NOT NULL AND v_source.revision <> it.source_revision THEN
        -- Checked against an earlier state of the source: nothing is written, and the caller
        -- checks the request again.
        v_outcome := json_build_object('n', it.n, 'ok', false, 'state', 'source_changed',
                                       'message', format('source %s changed while the request was checked',
                                                         it.source_id));
        EXIT item;
      END IF;

      IF (it.idempotency_key IS NOT NULL OR (it.accept AND it.body_digest IS NOT NULL AND it.duplicate_since IS NOT NULL))
         AND cardinality(v_pend_items) > 0 THEN
        -- This item reads the log (the key's original, the duplicate guard's earlier signal, their
        -- deliveries): the earlier items' entries are written first.
        PERFORM signalgate_ingest_write(v_pend_items, v_pend_charged, v_pend_used, v_pend_limits, v_pend_symbols,
                                        v_dl_items, v_dl_agents, v_dl_seqs, v_pend_risks, v_dl_statuses);
        v_pend_risks := '{}';
        v_dl_statuses := '{}';
        v_pend_items := '{}';
        v_pend_charged := '{}';
        v_pend_used := '{}';
        v_pend_limits := '{}';
        v_pend_symbols := '{}';
        v_dl_items := '{}';
        v_dl_agents := '{}';
        v_dl_seqs := '{}';
      END IF;

      IF it.idempotency_key IS NOT NULL THEN
        -- Claim the key first. A concurrent request holding it makes the INSERT wait for that
        -- transaction's end; it then finds the committed row, so exactly one request is recorded.
        v_claims := 0;
        LOOP
          INSERT INTO idempotency_keys (source_id, key, signal_id, request_hash, created_at)
          VALUES (it.source_id, it.idempotency_key, it.id, it.request_hash, it.received_at)
          ON CONFLICT (source_id, key) DO NOTHING;
          EXIT WHEN FOUND;
          SELECT k.signal_id, k.request_hash, k.created_at INTO v_held
            FROM idempotency_keys k
           WHERE k.source_id = it.source_id AND k.key = it.idempotency_key
             FOR UPDATE;
          IF FOUND THEN
            IF v_held.created_at >= it.idempotency_since THEN
              IF v_held.request_hash IS DISTINCT FROM it.request_hash THEN
                -- A different request under a held key: logged as its own 422 refusal, never
                -- charged or delivered, and the key is left bound to the original.
                INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, code, detail,
                                     param, errors, content_type, raw_body, normalized, idempotency_key,
                                     quota_period, quota_used, quota_limit)
                VALUES (it.id, it.source_id, it.account_id, it.received_at, 'rejected', 422,
                        'IDEMPOTENCY_KEY_REUSED', replace(it.key_reused_detail, '{signal}', v_held.signal_id),
                        'Idempotency-Key', NULL, it.content_type, decode(it.raw_body, 'base64'), NULL,
                        it.idempotency_key, NULL, NULL, NULL);
                v_log_accounts := v_log_accounts || it.account_id;
                v_log_days := v_log_days || (it.received_at AT TIME ZONE 'UTC')::date;
                v_log_rejected := v_log_rejected || true;
                v_outcome := json_build_object('n', it.n, 'ok', true, 'kind', 'key_reused',
                                               'original', v_held.signal_id);
                EXIT item;
              END IF;
              SELECT row_to_json(s) INTO v_original FROM signals s WHERE s.id = v_held.signal_id;
              IF v_original IS NULL THEN
                RAISE EXCEPTION 'idempotency key names missing signal %', v_held.signal_id;
              END IF;
              v_outcome := json_build_object('n', it.n, 'ok', true, 'kind', 'replay', 'record', v_original,
                                             'outcome', signalgate_outcome(v_held.signal_id));
              EXIT item;
            END IF;
            -- Past the replay window: this request takes the key over.
            UPDATE idempotency_keys
               SET signal_id = it.id, request_hash = it.request_hash, created_at = it.received_at
             WHERE source_id = it.source_id AND key = it.idempotency_key;
            EXIT;
          END IF;
          -- The holder was rolled back or released the key (a 429) meanwhile: claim again.
          v_claims := v_claims + 1;
          IF v_claims >= 3 THEN
            RAISE EXCEPTION 'idempotency key % keeps vanishing', it.idempotency_key;
          END IF;
        END LOOP;
      END IF;

      IF it.accept AND it.body_digest IS NOT NULL AND it.duplicate_since IS NOT NULL THEN
        -- The duplicate guard. Requests with the same body on the same source queue on this
        -- lock, from every instance, until the holder's COMMIT; the next one's query (a new
        -- snapshot, as every statement here) then sees what the holder accepted. Only the
        -- source's latest accepted signal in the window counts (only accepted signals keep a
        -- digest): an entry sent again after a close is no repeat.
        PERFORM pg_advisory_xact_lock(hashtextextended(
          'signalgate.duplicate' || chr(10) || current_schema() || chr(10) || it.source_id || chr(10) || it.body_digest, 0));
        v_repeated := NULL;
        SELECT s.id INTO v_repeated
          FROM (SELECT s.id, s.body_digest FROM signals s
                 WHERE s.source_id = it.source_id AND s.received_at >= it.duplicate_since AND s.body_digest IS NOT NULL
                 ORDER BY s.received_at DESC, s.id DESC LIMIT 1) s
         WHERE s.body_digest = it.body_digest;
        IF v_repeated IS NOT NULL THEN
          -- Logged as a duplicate of it, answered as it; never charged or delivered.
          INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, code, detail, param,
                               errors, content_type, raw_body, normalized, idempotency_key, quota_period,
                               quota_used, quota_limit, duplicate_of, symbol)
          VALUES (it.id, it.source_id, it.account_id, it.received_at, 'queued', 202, NULL, NULL, NULL, NULL,
                  it.content_type, decode(it.raw_body, 'base64'), it.normalized::json, it.idempotency_key,
                  NULL, NULL, NULL, v_repeated,
                  COALESCE(it.symbol, substring(it.normalized from '"symbol":"([^"\\]*)"')));
          IF it.idempotency_key IS NOT NULL THEN
            -- The key answers the original from now on, as this request was answered.
            UPDATE idempotency_keys SET signal_id = v_repeated
             WHERE source_id = it.source_id AND key = it.idempotency_key AND signal_id = it.id;
          END IF;
          SELECT row_to_json(s) INTO v_original FROM signals s WHERE s.id = v_repeated;
          v_outcome := json_build_object('n', it.n, 'ok', true, 'kind', 'duplicate', 'record', v_original,
                                         'outcome', signalgate_outcome(v_repeated));
          EXIT item;
        END IF;
      END IF;

      v_charged := false;
      v_used := NULL;
      v_limit := NULL;
      IF it.accept THEN
        -- The account's usage row is locked (FOR UPDATE) at its first charge in this call, as
        -- late as possible, and held to COMMIT: concurrent ingests, of any instance and of the
        -- previous revision's per-signal upsert, queue on it and read the count this call leaves.
        -- While it is held the count is kept here, each charge checked against the limit read
        -- under the lock, and the row is written once, at the end.
        v_at := NULL;
        FOR i IN 1 .. cardinality(v_use_accounts) LOOP
          IF v_use_accounts[i] = it.account_id AND v_use_periods[i] = it.period THEN
            v_at := i;
            EXIT;
          END IF;
        END LOOP;
        IF v_at IS NULL THEN
          SELECT u.used INTO v_used FROM usage u WHERE u.account_id = it.account_id AND u.period = it.period
             FOR UPDATE;
          IF NOT FOUND THEN
            -- The month's first charge: the row is created (a concurrent creator makes this wait
            -- for its end) and locked. An account without a quota gets none, and is refused.
            INSERT INTO usage (account_id, period, used)
            SELECT a.id, it.period, 0 FROM accounts a WHERE a.id = it.account_id AND a.monthly_signal_quota > 0
            ON CONFLICT (account_id, period) DO NOTHING;
            SELECT u.used INTO v_used FROM usage u WHERE u.account_id = it.account_id AND u.period = it.period
               FOR UPDATE;
          END IF;
          IF FOUND THEN
            SELECT a.monthly_signal_quota INTO v_limit FROM accounts a WHERE a.id = it.account_id;
            IF FOUND THEN
              v_use_accounts := v_use_accounts || it.account_id;
              v_use_periods := v_use_periods || it.period;
              v_use_used := v_use_used || v_used;
              v_use_limits := v_use_limits || v_limit;
              v_use_charged := v_use_charged || 0;
              v_at := cardinality(v_use_accounts);
            END IF;
          END IF;
        END IF;
        v_used := NULL;
        v_limit := NULL;
        IF v_at IS NOT NULL AND v_use_used[v_at] < v_use_limits[v_at] THEN
          v_use_used[v_at] := v_use_used[v_at] + 1;
          v_use_charged[v_at] := v_use_charged[v_at] + 1;
          v_used := v_use_used[v_at];
          v_limit := v_use_limits[v_at];
          v_charged := true;
        END IF;
      END IF;

      -- The symbol goes with the signal and with each of its deliveries (migration 016). The
      -- entry is written with the others (signalgate_ingest_write).
      v_symbol := COALESCE(it.symbol, substring(it.normalized from '"symbol":"([^"\\]*)"'));
      v_pend_items := v_pend_items || it;
      v_pend_charged := v_pend_charged || v_charged;
      v_pend_used := v_pend_used || v_used;
      v_pend_limits := v_pend_limits || v_limit;
      v_pend_symbols := v_pend_symbols || v_symbol;
      v_pend_risks := v_pend_risks || v_src_risks[v_src_at];
      v_log_accounts := v_log_accounts || it.account_id;
      v_log_days := v_log_days || (it.received_at AT TIME ZONE 'UTC')::date;
      v_log_rejected := v_log_rejected || NOT v_charged;

      IF it.idempotency_key IS NOT NULL AND NOT v_charged AND it.http_status = 429 THEN
        -- A quota refusal is temporary: the key claimed above is released, so a retry is evaluated afresh.
        DELETE FROM idempotency_keys
         WHERE source_id = it.source_id AND key = it.idempotency_key AND signal_id = it.id;
      END IF;

      v_agents := '{}';
      v_item_halted := '{}';
      IF v_charged THEN
        -- One delivery per routed agent at the agent's next queue position. The agents' rows
        -- are locked in id order and held to COMMIT: two ingests routed to the same agents take
        -- their sequence numbers in the same order on every agent. Numbers are counted here and
        -- each agent's row is written once per call, at the end: a row updated once per item
        -- would leave more versions than fit in its page before the COMMIT lets them be pruned.
        -- The routed agents are read and locked at the source's first charged item, and later
        -- items of the source reuse that list: the locks keep every agent on it from being
        -- deleted, and a change of the source's routing waits for the source's key-share lock.
        -- An agent created meanwhile would have been seen by a later item's query; it is
        -- committed after this call began, so after every item's request arrived: concurrent
        -- with all of them, it may get none of them, as it gets none of the earlier items.
        IF v_src_route_from[v_src_at] IS NULL THEN
          IF json_array_length(v_source.agent_ids) > 0 THEN
            v_routed := ARRAY(SELECT json_array_elements_text(v_source.agent_ids));
          ELSE
            v_routed := NULL;
          END IF;
          v_src_route_from[v_src_at] := cardinality(v_route_agents) + 1;
          FOR v_agent IN
            SELECT g.id, g.last_seq FROM agents g
             WHERE g.account_id = it.account_id AND (v_routed IS NULL OR g.id = ANY (v_routed))
             ORDER BY g.id
               FOR NO KEY UPDATE
          LOOP
            v_at := array_position(v_seq_agents, v_agent.id);
            IF v_at IS NULL THEN
              v_seq_agents := v_seq_agents || v_agent.id;
              v_seq_last := v_seq_last || v_agent.last_seq;
              v_at := cardinality(v_seq_agents);
            END IF;
            v_route_agents := v_route_agents || v_agent.id;
            v_route_seq_at := v_route_seq_at || v_at;
          END LOOP;
          v_src_route_to[v_src_at] := cardinality(v_route_agents);
        END IF;
        FOR k IN v_src_route_from[v_src_at] .. v_src_route_to[v_src_at] LOOP
          v_at := v_route_seq_at[k];
          v_seq_last[v_at] := v_seq_last[v_at] + 1;
          v_dl_items := v_dl_items || cardinality(v_pend_items);
          v_dl_agents := v_dl_agents || v_seq_agents[v_at];
          v_dl_seqs := v_dl_seqs || v_seq_last[v_at];
          -- Halted at the door (the account, the source or the agent): logged, never handed out.
          IF v_src_halted[v_src_at] OR v_seq_agents[v_at] = ANY (v_halted_agents) THEN
            v_dl_statuses := v_dl_statuses || 'halted'::text;
            v_item_halted := v_item_halted || v_seq_agents[v_at];
          ELSE
            v_dl_statuses := v_dl_statuses || 'queued'::text;
            v_agents := v_agents || v_seq_agents[v_at];
          END IF;
        END LOOP;
      END IF;

      -- agents: those the signal is queued for (to notify); halted: those it was halted for.
      v_outcome := json_build_object(
        'n', it.n, 'ok', true, 'kind', 'recorded',
        'charged', v_charged, 'used', v_used, 'limit', v_limit, 'agents', v_agents, 'halted', v_item_halted);
      agents := agents || v_agents;
    END;
    outcomes := outcomes || v_outcome;
  END LOOP;
  IF cardinality(v_pend_items) > 0 THEN
    PERFORM signalgate_ingest_write(v_pend_items, v_pend_charged, v_pend_used, v_pend_limits, v_pend_symbols,
                                    v_dl_items, v_dl_agents, v_dl_seqs, v_pend_risks, v_dl_statuses);
  END IF;
  IF cardinality(v_use_accounts) > 0 THEN
    UPDATE usage u SET used = u.used + c.charged
      FROM unnest(v_use_accounts, v_use_periods, v_use_charged) AS c(account_id, period, charged)
     WHERE u.account_id = c.account_id AND u.period = c.period AND c.charged > 0;
  END IF;
  IF cardinality(v_log_accounts) > 0 THEN
    -- In key order, so that two batches writing the same rows never wait for each other in a cycle.
    INSERT INTO signals_per_day AS p (account_id, day, accepted, rejected)
    SELECT l.account_id, l.day, count(*) FILTER (WHERE NOT l.rejected), count(*) FILTER (WHERE l.rejected)
      FROM unnest(v_log_accounts, v_log_days, v_log_rejected) AS l(account_id, day, rejected)
     GROUP BY l.account_id, l.day
     ORDER BY l.account_id, l.day
    ON CONFLICT (account_id, day) DO UPDATE
      SET accepted = p.accepted + excluded.accepted, rejected = p.rejected + excluded.rejected;
  END IF;
  IF cardinality(v_seq_agents) > 0 THEN
    UPDATE agents a SET last_seq = n.last_seq
      FROM unnest(v_seq_agents, v_seq_last) AS n(id, last_seq)
     WHERE a.id = n.id;
  END IF;
END;
$$;

-- The batch as one call. Not isolated (the usual case): the items run without subtransactions,
-- and any error other than an unknown source aborts the whole call, which the client then
-- sends again isolated. Isolated: each item runs in its own BEGIN … EXCEPTION block (a
-- subtransaction), so an item that fails (a deadlock, a duplicate id) is rolled back alone and
-- answered as an error with its SQLSTATE while the others commit. NOTIFY is queued in the same
-- transaction, so listeners hear of the deliveries only if and when it commits.
CREATE OR REPLACE FUNCTION signalgate_ingest(items json, notify_scope text, notify_instance text, isolate boolean)
RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v_item json;
  v_outcomes json[];
  v_agents text[];
  v_results json[] := '{}';
  v_notify text[] := '{}';
  v_chunk text[] := '{}';
  v_chunk_bytes integer;
  v_base_bytes integer;
  v_agent text;
BEGIN
  IF isolate THEN
    FOR v_item IN SELECT e FROM json_array_elements(items) AS e LOOP
      BEGIN
        SELECT r.outcomes, r.agents INTO v_outcomes, v_agents FROM signalgate_ingest_items(json_build_array(v_item)) r;
      EXCEPTION WHEN OTHERS THEN
        v_outcomes := ARRAY[json_build_object('n', (v_item->>'n')::integer, 'ok', false,
                                              'state', SQLSTATE, 'message', SQLERRM)];
        v_agents := '{}';
      END;
      v_results := v_results || v_outcomes;
      v_notify := v_notify || v_agents;
    END LOOP;
  ELSE
    SELECT r.outcomes, r.agents INTO v_results, v_notify FROM signalgate_ingest_items(items) r;
  END IF;

  IF cardinality(v_notify) > 0 THEN
    -- Payloads of at most ~7000 bytes (PostgreSQL refuses 8000), as the client would split them.
    v_base_bytes := octet_length(json_build_object('s', notify_scope, 'i', notify_instance, 'a', '{}'::text[])::text);
    v_chunk_bytes := v_base_bytes;
    FOR v_agent IN SELECT DISTINCT a FROM unnest(v_notify) AS a ORDER BY a LOOP
      IF cardinality(v_chunk) > 0 AND v_chunk_bytes + octet_length(to_json(v_agent)::text) + 1 > 7000 THEN
        PERFORM pg_notify('signalgate_deliveries',
                          json_build_object('s', notify_scope, 'i', notify_instance, 'a', v_chunk)::text);
        v_chunk := '{}';
        v_chunk_bytes := v_base_bytes;
      END IF;
      v_chunk := v_chunk || v_agent;
      v_chunk_bytes := v_chunk_bytes + octet_length(to_json(v_agent)::text) + 1;
    END LOOP;
    PERFORM pg_notify('signalgate_deliveries',
                      json_build_object('s', notify_scope, 'i', notify_instance, 'a', v_chunk)::text);
  END IF;

  RETURN array_to_json(v_results);
END;
$$;

-- The revision of this file's definitions (see the top). migrate reads it back before applying.
COMMENT ON FUNCTION signalgate_ingest(json, text, text, boolean) IS 'signalgate functions revision 9';
