#!/usr/bin/env bash
# How close the SQLite inbound path could come to bare node:http on one core if it gave up what
# it must keep: the equal-CPU benchmark (server on CPU 0, wrk on CPU 1, bare node:http in the same
# run) of a throwaway build of HEAD, three times:
#   as built                     the product as it is;
#   without the log's indexes    the four indexes on every accepted signal dropped at start
#                                (the log's pages and filters would then read the whole table);
#   without indexes or sync      the same, and nothing ever synced: not the WAL after each group
#                                commit, not SQLite's own checkpoints (synchronous = OFF); an
#                                acknowledged signal can be lost to a power cut.
# The throwaway build gets the two switches from a patch made here; the product has neither.
# Run from a checkout with node_modules installed, nothing else running:
#   scripts/one-core-ceilings.sh            (BENCH_ROUNDS, default 5, of BENCH_SECONDS, default 8)
set -euo pipefail

checkout=$(pwd)
work=$(mktemp -d /tmp/signalgate-ceilings-XXXXXX)
build="$work/build"
cleanup() {
  git -C "$checkout" worktree remove --force "$build" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

git -C "$checkout" worktree add --quiet --detach "$build" HEAD
ln -s "$checkout/node_modules" "$build/node_modules"

# The two switches, each a line the build must take; a patch that no longer applies stops here.
node - "$build" <<'EOF'
const { readFileSync, writeFileSync } = require('node:fs');
const build = process.argv[2];
function patch(file, anchor, replacement) {
  const path = `${build}/${file}`;
  const text = readFileSync(path, 'utf8');
  if (!text.includes(anchor)) throw new Error(`${file}: '${anchor}' not found; update this script's patch`);
  writeFileSync(path, text.replace(anchor, replacement));
}
patch(
  'src/store/sqlite/migrate-sqlite.ts',
  '  }).immediate();\n}',
  "  }).immediate();\n  for (const name of (process.env.CEILING_DROP_INDEXES ?? '').split(',').filter(Boolean)) db.exec(`DROP INDEX IF EXISTS ${name}`);\n}",
);
// A group commit runs under synchronous = NORMAL, whose checkpoints still sync; OFF syncs nothing.
for (const file of ['src/store/sqlite/ingest.ts', 'src/store/sqlite/write-group.ts']) {
  patch(
    file,
    "this.connection.stmt('PRAGMA synchronous = NORMAL')",
    "this.connection.stmt(process.env.CEILING_NO_SYNC === '1' ? 'PRAGMA synchronous = OFF' : 'PRAGMA synchronous = NORMAL')",
  );
}
patch(
  'src/store/sqlite/wal-sync.ts',
  '    if (this.fd === null) this.open();',
  "    if (process.env.CEILING_NO_SYNC === '1') return Promise.resolve();\n    if (this.fd === null) this.open();",
);
EOF
(cd "$build" && npx tsc -p tsconfig.build.json)

indexes=signals_log,signals_source_log,signals_symbol_log,signals_source_symbol_log
export SIGNALGATE_BENCH_DATABASE_URL=postgres://nobody@127.0.0.1:1/x # SQLite only
export BENCH_ROUNDS=${BENCH_ROUNDS:-5}
summary="$work/summary"
for variant in "as built||" "without the log's indexes|$indexes|" "without indexes or sync|$indexes|1"; do
  IFS='|' read -r name drop nosync <<<"$variant"
  echo "== $name ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
  (cd "$build" && CEILING_DROP_INDEXES="$drop" CEILING_NO_SYNC="$nosync" node dist/bench/main.js --equal-cpu) >"$work/run.log" 2>&1 ||
    { cat "$work/run.log"; exit 1; }
  grep -E '^equal-cpu round' "$work/run.log"
  # | server | req/s | p50 ms | p99 ms | vs bare | p99 vs bare | CPU µs |: fields 3, 5, 6, 7 and 8 by '|'
  bare_cpu=$(grep -E '^\| bare node:http' "$work/run.log" | awk -F'|' '{gsub(/ /, "", $8); print $8}')
  grep -E '^\| signalgate \(SQLite\)' "$work/run.log" |
    awk -F'|' -v name="$name" -v bare="$bare_cpu" '{for (i = 3; i <= 8; i++) gsub(/ /, "", $i); print "| " name " | " $6 " | " $5 " | " $7 " | " $8 " | " bare " |"}' >>"$summary"
done

echo
echo "equal CPU, medians of $BENCH_ROUNDS rounds; the ratio and the p99 against bare node:http in the same run"
echo "| build | throughput vs bare | p99 ms | p99 vs bare | server CPU µs a request | bare's µs |"
echo "|---|---|---|---|---|---|"
cat "$summary"
