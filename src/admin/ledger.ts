import { ErrorCode, type Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';
import { latencyAndSlippage, type PathSummary } from '../ledger/latency-and-slippage.js';
import type { LedgerTrade } from '../ledger/ledger-trade.js';
import { ledgerStatistics, statisticsBy, type GroupStatistics, type LedgerStatistics } from '../ledger/statistics.js';
import { buildTrades } from '../ledger/trade-builder.js';
import { type JsonSchema, objectSchema } from '../openapi/index.js';
import type { Store } from '../store/store.js';
import { type AdminResult, refuse } from './admin-result.js';

type Parameter = 'accountId' | 'agentId' | 'sourceId' | 'strategy' | 'symbol' | 'from' | 'until';
const TIME_EXAMPLE = '2026-12-01T00:00:00Z';

/** The query of the ledger's routes (trades, their CSV, the statistics), as published. */
export const LEDGER_QUERY = objectSchema(
  {
    accountId: { type: 'string', minLength: 1, description: 'the account whose ledger', examples: ['acc_0123'] },
    agentId: { type: 'string', minLength: 1, description: "only this agent's trades (one venue account)" },
    sourceId: { type: 'string', minLength: 1, description: 'only trades opened by signals of this source' },
    strategy: { type: 'string', minLength: 1, description: "only trades whose opening signal's comment is this" },
    symbol: { type: 'string', minLength: 1, description: "only this symbol (the venue's, case-insensitive)" },
    from: { type: 'string', format: 'date-time', description: 'trades closed at or after this time (open ones: all)' },
    until: { type: 'string', format: 'date-time', description: 'trades closed, or open ones opened, before this time' },
  } satisfies Record<Parameter, JsonSchema>,
  ['accountId'],
);
const PARAMETERS = Object.keys(LEDGER_QUERY.properties);

/** What the ledger's routes read: the trades' filter and period. */
export interface LedgerQuery {
  accountId: string;
  agentId?: string;
  sourceId?: string;
  strategy?: string;
  symbol?: string;
  from?: string;
  until?: string;
}

const TIME_OR_NULL: JsonSchema = { type: ['string', 'null'], format: 'date-time' };
const STRING_OR_NULL: JsonSchema = { type: ['string', 'null'] };
const NUMBER_OR_NULL: JsonSchema = { type: ['number', 'null'] };

/** One trade as the API answers it. */
export const TRADE_VIEW = objectSchema(
  {
    id: { type: 'string' },
    agentId: { type: 'string' },
    accountId: { type: 'string' },
    sourceId: STRING_OR_NULL,
    strategy: { ...STRING_OR_NULL, description: "the opening signal's comment" },
    symbol: { type: 'string' },
    side: { type: 'string', enum: ['long', 'short'] },
    lots: { type: 'number' },
    entryAt: { type: 'string', format: 'date-time' },
    entryPrice: { type: 'number' },
    exitAt: TIME_OR_NULL,
    exitPrice: NUMBER_OR_NULL,
    fees: { type: 'number' },
    funding: { type: 'number', description: 'received (positive) or paid (negative)' },
    realizedProfit: { ...NUMBER_OR_NULL, description: 'account currency, net of fees and funding; null while open' },
    openingSignalId: STRING_OR_NULL,
    closingSignalIds: { type: 'array', items: { type: 'string' } },
    quoteAtReceipt: NUMBER_OR_NULL,
    receivedAt: TIME_OR_NULL,
    firstFillAt: TIME_OR_NULL,
  },
  [],
);

/** The trades of an account's ledger that the query selects, oldest entry first. */
export async function ledgerTrades(
  store: Store,
  query: Readonly<Record<string, unknown>>,
): Promise<AdminResult<{ trades: LedgerTrade[] }>> {
  const read = await readLedgerQuery(store, query);
  if (!read.ok) return read;
  const q = read.value;
  const trades = (await selectedTrades(store, q)).filter((trade) => inPeriod(trade, q));
  return { ok: true, value: { trades } };
}

/** The statistics of the selected trades, and latency and slippage per source and per venue (agent). */
export async function ledgerStatisticsOf(
  store: Store,
  query: Readonly<Record<string, unknown>>,
): Promise<
  AdminResult<{
    statistics: LedgerStatistics;
    bySource: GroupStatistics[];
    byStrategy: GroupStatistics[];
    latencyBySource: Omit<PathSummary, 'paths'>[];
    latencyByVenue: Omit<PathSummary, 'paths'>[];
  }>
> {
  const read = await readLedgerQuery(store, query);
  if (!read.ok) return read;
  const q = read.value;
  const trades = await selectedTrades(store, q);
  const period = { ...(q.from !== undefined && { from: q.from }), ...(q.until !== undefined && { until: q.until }) };
  const summaries = (by: 'source' | 'venue') =>
    latencyAndSlippage(trades, by, period).map(({ paths: _paths, ...summary }) => summary);
  return {
    ok: true,
    value: {
      statistics: ledgerStatistics(trades, period),
      bySource: statisticsBy(trades, 'source', period),
      byStrategy: statisticsBy(trades, 'strategy', period),
      latencyBySource: summaries('source'),
      latencyByVenue: summaries('venue'),
    },
  };
}

const CSV_COLUMNS: (keyof LedgerTrade)[] = [
  'id',
  'agentId',
  'accountId',
  'sourceId',
  'strategy',
  'symbol',
  'side',
  'lots',
  'entryAt',
  'entryPrice',
  'exitAt',
  'exitPrice',
  'fees',
  'funding',
  'realizedProfit',
  'openingSignalId',
  'closingSignalIds',
  'quoteAtReceipt',
  'receivedAt',
  'firstFillAt',
];

/** The selected trades as CSV (RFC 4180, a header line, CRLF), for a spreadsheet. */
export async function ledgerCsv(store: Store, query: Readonly<Record<string, unknown>>): Promise<AdminResult<string>> {
  const listed = await ledgerTrades(store, query);
  if (!listed.ok) return listed;
  const lines = [CSV_COLUMNS.join(',')];
  for (const trade of listed.value.trades) lines.push(CSV_COLUMNS.map((column) => csvCell(trade[column])).join(','));
  return { ok: true, value: lines.join('\r\n') + '\r\n' };
}

function csvCell(value: LedgerTrade[keyof LedgerTrade]): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  let text = Array.isArray(value) ? value.join(' ') : value;
  // A comment is the sender's text: one starting = + - @ would be a formula in a spreadsheet.
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n']/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

async function selectedTrades(store: Store, q: LedgerQuery): Promise<LedgerTrade[]> {
  const filter = { accountId: q.accountId, ...(q.agentId !== undefined && { agentId: q.agentId }) };
  const [fills, funding, busts] = await Promise.all([
    store.ledger.fills(filter),
    store.ledger.funding(filter),
    store.ledger.busts(filter),
  ]);
  const symbol = q.symbol?.toUpperCase();
  return buildTrades(fills, funding, busts).filter(
    (trade) =>
      (q.sourceId === undefined || trade.sourceId === q.sourceId) &&
      (q.strategy === undefined || trade.strategy === q.strategy) &&
      (symbol === undefined || trade.symbol.toUpperCase() === symbol),
  );
}

/** A closed trade by its exit time; an open one when it was opened before the period's end. */
function inPeriod(trade: LedgerTrade, q: LedgerQuery): boolean {
  if (trade.exitAt === null) return q.until === undefined || Date.parse(trade.entryAt) < Date.parse(q.until);
  const exit = Date.parse(trade.exitAt);
  if (q.from !== undefined && exit < Date.parse(q.from)) return false;
  return q.until === undefined || exit < Date.parse(q.until);
}

/** Each parameter known, given once, not empty; times as times; the account and agent existing. */
async function readLedgerQuery(
  store: Store,
  query: Readonly<Record<string, unknown>>,
): Promise<AdminResult<LedgerQuery>> {
  const problems: Problem[] = [];
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (!PARAMETERS.includes(name)) problems.push(...unknownNames([name], PARAMETERS, 'query parameter'));
    else if (typeof value !== 'string')
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: name,
        detail: `query parameter '${name}' is given more than once; give it once`,
      });
    else if (value === '')
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: name,
        detail: `${name} must not be empty; leave it out for no filter`,
      });
    else values[name] = value;
  }
  if (values.accountId === undefined && !problems.some((p) => p.param === 'accountId'))
    problems.push({
      code: ErrorCode.INVALID_REQUEST,
      param: 'accountId',
      detail: 'accountId is required: the ledger is kept per account (its currency); give the account id, acc_…',
    });
  for (const name of ['from', 'until'] as const) {
    const value = values[name];
    if (value !== undefined && (!/^\d{4}-\d{2}-\d{2}(T|$)/.test(value) || Number.isNaN(Date.parse(value))))
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: name,
        detail: `${name} must be a time such as ${TIME_EXAMPLE} (or a date, 2026-12-01, meaning its midnight UTC)`,
      });
  }
  if (problems.length > 0) return refuse(...problems);
  if ((await store.accounts.get(values.accountId!)) === null)
    return refuse({
      code: ErrorCode.NOT_FOUND,
      param: 'accountId',
      detail: `no account with id '${values.accountId}'`,
    });
  if (values.agentId !== undefined) {
    const agent = await store.agents.get(values.agentId);
    if (agent === null || agent.accountId !== values.accountId)
      return refuse({
        code: ErrorCode.NOT_FOUND,
        param: 'agentId',
        detail: `no agent with id '${values.agentId}' in account '${values.accountId}'`,
      });
  }
  const toIso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());
  const from = toIso(values.from);
  const until = toIso(values.until);
  return {
    ok: true,
    value: {
      accountId: values.accountId!,
      ...(values.agentId !== undefined && { agentId: values.agentId }),
      ...(values.sourceId !== undefined && { sourceId: values.sourceId }),
      ...(values.strategy !== undefined && { strategy: values.strategy }),
      ...(values.symbol !== undefined && { symbol: values.symbol }),
      ...(from !== undefined && { from }),
      ...(until !== undefined && { until }),
    },
  };
}
