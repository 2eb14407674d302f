/**
 * The shape of the big log the `--big-log` benchmark seeds, the same on both stores: signal i
 * (0 ≤ i < n) is a pure function of i, so the SQLite seeder (JavaScript) and the PostgreSQL one
 * (`generate_series`) write the same log, and the benchmark knows which ids and filters to ask
 * for without reading the store.
 *
 * - accounts: n / 20,000 (at least 10), skewed: account a gets a share growing towards 0 (the
 *   biggest tenant holds about a twentieth of the log at 10 M); 3 sources each; 1 agent each, 2
 *   for every fifth account, each with the account state an agent publishes (`AGENT_STATE`);
 * - signals spread evenly over the 80 days before seeding (retention's default 90 d has
 *   nothing to prune until the cache is ten days old);
 * - status: 5 % rejected, 2 % duplicates, the rest accepted; 12 symbols, skewed;
 * - each accepted signal has a delivery per agent of its account: 80 % executed, 8 % rejected,
 *   3 % failed, 9 % expired; the newest 200 are delivered, the newest 50 still queued.
 */
export const SYMBOLS = [
  'EURUSD',
  'GBPUSD',
  'XAUUSD',
  'USDJPY',
  'BTCUSD',
  'NAS100',
  'US30',
  'ETHUSD',
  'AUDUSD',
  'USDCAD',
  'GBPJPY',
  'EURJPY',
];
export const SPAN_MS = 80 * 24 * 3600 * 1000;
const SOURCES_PER_ACCOUNT = 3;

export function accountCount(n: number): number {
  return Math.max(10, Math.round(n / 20_000));
}
export const accountId = (a: number) => `acc_bl${String(a).padStart(5, '0')}`;
export const sourceId = (a: number, s: number) => `src_bl${String(a).padStart(5, '0')}_${s}`;
export const agentId = (a: number, k: number) => `agt_bl${String(a).padStart(5, '0')}_${k}`;
export const agentsOf = (a: number) => (a % 5 === 0 ? 2 : 1);
export const sourcesPerAccount = SOURCES_PER_ACCOUNT;
export const signalId = (i: number) => `sig_bl${i.toString(16).padStart(11, '0')}`;

/**
 * The state every seeded agent has published, as a venue agent publishes it (its funds, five
 * open positions and two pending orders): about 1 KB, so the agents' pages carry what a live
 * service's do.
 */
export const AGENT_STATE = JSON.stringify({
  balance: 10_250.4,
  equity: 10_187.95,
  currency: 'USD',
  venue: 'paper',
  connected: true,
  dryRun: false,
  positions: SYMBOLS.slice(0, 5).map((symbol, k) => ({
    position: 1000 + k,
    symbol,
    side: k % 2 === 0 ? 'buy' : 'sell',
    volume: 0.1 * (k + 1),
    price: 1.08504 + k,
    sl: 1.08304 + k,
    comment: `sig_bl${String(k).padStart(11, '0')}`,
  })),
  orders: SYMBOLS.slice(5, 7).map((symbol, k) => ({
    order: 2000 + k,
    symbol,
    side: 'buy',
    kind: 'limit',
    volume: 0.2,
    price: 18_000.5 + k,
    sl: 17_950.5 + k,
    comment: `sig_bl${String(10 + k).padStart(11, '0')}`,
  })),
  updatedAt: '2026-11-29T12:00:00.000Z',
});

export type SeedStatus = 'accepted' | 'rejected' | 'duplicate';

/** Signal i's fields (the SQL twins are in big-log-seed-postgres.ts). */
export function seedSignal(i: number, n: number, endMillis: number) {
  const accounts = accountCount(n);
  const u = ((i * 104_729) % 1_000_003) / 1_000_003;
  const a = Math.floor(accounts * u * u);
  const v = ((i * 15_485_863) % 1_000_033) / 1_000_033;
  const r = (i * 7919) % 1000;
  const status: SeedStatus = r < 50 ? 'rejected' : r < 70 ? 'duplicate' : 'accepted';
  return {
    id: signalId(i),
    account: a,
    source: i % SOURCES_PER_ACCOUNT,
    symbol: SYMBOLS[Math.floor(SYMBOLS.length * v * v)]!,
    action: i % 2 === 0 ? 'buy' : 'sell',
    status,
    receivedMillis: endMillis - SPAN_MS + Math.floor(i * (SPAN_MS / n)),
  };
}

/** Delivery k of accepted signal i. */
export function seedDeliveryStatus(i: number, k: number, n: number): string {
  if (i >= n - 50) return 'queued';
  if (i >= n - 200) return 'delivered';
  const r = (i * 6151 + k * 17) % 100;
  return r < 80 ? 'executed' : r < 88 ? 'rejected' : r < 91 ? 'failed' : 'expired';
}
