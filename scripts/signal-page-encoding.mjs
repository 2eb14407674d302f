// What making the bytes of a signal log page costs, per way of making them, for pages of the
// big-log benchmark's entries of several sizes: the server's CPU for a page besides the store's
// read. The entries are read once from the benchmark's cached SQLite store, then written over
// and over in this process (no server, no socket):
//   string:  one JS string joined from the entries' JSON (what the route answered), then
//            Buffer.byteLength of it (Fastify's content-length) and its UTF-8 bytes (what
//            Node's socket write encodes; here Buffer.from)
//   concat:  each entry's JSON encoded to UTF-8 on its own, Buffer.concat of them with the commas
//   one:     each entry's byte length, one Buffer of their sum, each entry written into it
// Needs dist/ and the seeded cache (`BENCH_BIG_LOG_SEED_ONLY=1 npm run bench -- --big-log`):
//   BENCH_BIG_LOG_SIGNALS=1000000 node scripts/signal-page-encoding.mjs [sizes, default 1,10,50,100,115,150,200,500]
import { Buffer } from 'node:buffer';
import console from 'node:console';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { seededBigLog } from '../dist/bench/big-log.js';
import { loadAverage } from '../dist/bench/load-average.js';
import { openStore } from '../dist/store/open-store.js';
import { logEntryJson } from '../dist/store/log-entry.js';

const N = Number(process.env.BENCH_BIG_LOG_SIGNALS ?? 10_000_000);
const sizes = (process.argv[2] ?? '1,10,50,100,115,150,200,500').split(',').map(Number);
const { dataDir } = seededBigLog('sqlite', N); // not seeded: fails here
const store = await openStore({ dataDir });
const { entries: all, next } = await store.listLogEntries({ limit: Math.max(...sizes) });
await store.close();

const tail = `],"next":${JSON.stringify(next)}}`;
const ways = {
  string(entries) {
    const text = `{"signals":[${entries.map(logEntryJson).join(',')}${tail}`;
    Buffer.byteLength(text);
    return Buffer.from(text);
  },
  concat(entries) {
    const parts = [Buffer.from('{"signals":[')];
    for (const [k, entry] of entries.entries()) parts.push(Buffer.from(k === 0 ? logEntryJson(entry) : `,${logEntryJson(entry)}`));
    parts.push(Buffer.from(tail));
    return Buffer.concat(parts);
  },
  one(entries) {
    const texts = entries.map(logEntryJson);
    let size = 12 + Buffer.byteLength(tail) + Math.max(0, texts.length - 1);
    for (const text of texts) size += Buffer.byteLength(text);
    const bytes = Buffer.allocUnsafe(size);
    let at = bytes.write('{"signals":[', 0, 'latin1');
    for (const [k, text] of texts.entries()) {
      if (k > 0) bytes[at++] = 0x2c; // ','
      at += bytes.write(text, at);
    }
    bytes.write(tail, at);
    return bytes;
  },
};

console.log(`µs per page (median of 7 batches, each ≥ 200 ms), entries of the ${N.toLocaleString('en')}-signal cache; load ${loadAverage()}`);
console.log(`| entries | characters | ${Object.keys(ways).join(' | ')} |\n|---|---|${Object.keys(ways).map(() => '---|').join('')}`);
for (const size of sizes) {
  const entries = all.slice(0, size);
  const expected = ways.string(entries);
  const cells = [];
  for (const [name, way] of Object.entries(ways)) {
    if (!way(entries).equals(expected)) throw new Error(`${name} made other bytes than the string for ${size} entries`);
    const batches = [];
    // The ways alternate per batch in spirit: each gets its batches back to back, short enough
    // that a neighbour's load lands on all of them alike.
    for (let b = 0; b < 7; b++) {
      let n = 0;
      const started = performance.now();
      do {
        for (let k = 0; k < 20; k++) way(entries);
        n += 20;
      } while (performance.now() - started < 200);
      batches.push(((performance.now() - started) * 1000) / n);
    }
    cells.push(batches.sort((a, b) => a - b)[3].toFixed(1));
  }
  console.log(`| ${size} | ${expected.length.toLocaleString('en')} | ${cells.join(' | ')} |`);
}
console.log(`load ${loadAverage()}`);
