// Summarises the files scripts/pg-poll-handoff.mjs wrote, for each run's last burst (the measured
// one):
//   node scripts/pg-poll-handoff-summary.mjs /tmp/pg-poll-handoff-*.json
import console from 'node:console';
import fs from 'node:fs';
import process from 'node:process';

const q = (values, p) => {
  if (values.length === 0) return '-';
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))].toFixed(1);
};
const spread = (values) => `${q(values, 0.5)} / ${q(values, 0.9)} / ${q(values, 0.99)}`;

for (const file of process.argv.slice(2)) {
  const { takes, statements, lags, waiting, lookups = [] } = JSON.parse(fs.readFileSync(file, 'utf8'));
  // The last burst: the takes that handed out its signals, the last $BURST_SIGNALS (default
  // 5,000) handed out (each signal is handed out once unless an ack failed).
  const withSignals = takes.filter((t) => t.signals > 0).sort((a, b) => a.submitted - b.submitted);
  if (withSignals.length === 0) continue;
  let from = withSignals[0].submitted;
  let counted = 0;
  for (let i = withSignals.length - 1; i >= 0 && counted < Number(process.env.BURST_SIGNALS ?? 5000); i--) {
    counted += withSignals[i].signals;
    from = withSignals[i].submitted;
  }
  const to = Math.max(...withSignals.filter((t) => t.submitted >= from).map((t) => t.done));
  const inWindow = (t) => t >= from && t <= to;
  const burst = takes.filter((t) => inWindow(t.submitted));
  const handed = burst.filter((t) => t.signals > 0);
  const hand = statements.filter((s) => s.name === 'signalgate-hand-out-poll' && inWindow(s.called) && s.done > 0);
  const ack = statements.filter((s) => s.name === 'signalgate-grouped-acks' && inWindow(s.called) && s.done > 0);
  const busy = (list) => list.reduce((sum, s) => sum + (s.done - s.called), 0) / (to - from);
  // Of each hand-out statement's run, the share during which an ack statement ran too.
  const overlap = hand.map((h) => {
    let shared = 0;
    for (const a of ack) shared += Math.max(0, Math.min(h.done, a.done) - Math.max(h.started, a.started));
    return Math.min(1, shared / Math.max(0.001, h.done - h.started));
  });
  const ackRunningAtStart = hand.map((h) => ack.filter((a) => a.started <= h.started && a.done > h.started).length);
  const lookUp = statements.filter((s) => s.name === 'signalgate-find-agent-identities' && inWindow(s.called) && s.done > 0);
  const touch = statements.filter((s) => s.name === 'signalgate-touch-agents' && inWindow(s.called) && s.done > 0);
  const calls = lookups.filter(([called]) => inWindow(called));
  const lag = lags.filter(([at]) => inWindow(at)).map(([, l]) => l);
  const wait = waiting.filter(([at]) => inWindow(at));
  console.log(`${file}: last burst ${(to - from).toFixed(0)} ms`);
  console.log(`  polls' takes ${burst.length}, with signals ${handed.length} (${spread(handed.map((t) => t.signals))} signals, p50/p90/p99)`);
  console.log(`  take waiting in pollTakes for its batch to start, ms p50/p90/p99: ${spread(burst.map((t) => t.started - t.submitted))}`);
  console.log(`  take's batch from start to answer, ms: ${spread(burst.map((t) => t.done - t.started))}; takes per batch ${spread(burst.map((t) => t.batch))}`);
  console.log(`  hand-out statements ${hand.length}: wait for a connection ${spread(hand.map((s) => s.started - s.called))}, run ${spread(hand.map((s) => s.done - s.started))}; in flight ${(100 * busy(hand)).toFixed(0)} % of the burst`);
  console.log(`  ack statements ${ack.length} (acks ${spread(ack.map((s) => s.size))}): wait for a connection ${spread(ack.map((s) => s.started - s.called))}, run ${spread(ack.map((s) => s.done - s.started))}; summed ${(100 * busy(ack)).toFixed(0)} % of the burst`);
  console.log(`  token lookups ${calls.length}, each call from asked to answered ${spread(calls.map(([c, d]) => d - c))}; statements ${lookUp.length} (hashes ${spread(lookUp.map((s) => s.size))}): wait for a connection ${spread(lookUp.map((s) => s.started - s.called))}, run ${spread(lookUp.map((s) => s.done - s.started))}; summed ${(100 * busy(lookUp)).toFixed(0)} % of the burst`);
  console.log(`  presence writes ${touch.length} (agents ${spread(touch.map((s) => s.size))}): wait for a connection ${spread(touch.map((s) => s.started - s.called))}, run ${spread(touch.map((s) => s.done - s.started))}`);
  console.log(`  hand-out run shared with an ack statement: ${spread(overlap.map((o) => 100 * o))} %; acks running at its start ${spread(ackRunningAtStart)}`);
  console.log(`  event loop delay (5 ms timer), ms: ${spread(lag)}; samples with callers waiting for a pool: ${wait.length}, most waiting ${Math.max(0, ...wait.map((w) => w[2]))} (pool sizes ${[...new Set(wait.map((w) => w[1]))].join(', ')})`);
}
