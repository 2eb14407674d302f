import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  accountUsage,
  CREATE_ACCOUNT_BODY,
  createAccount,
  dailyUsage,
  listAccounts,
  showAccount,
  UPDATE_ACCOUNT_BODY,
  updateAccount,
} from '../admin/accounts.js';
import type { AdminResult } from '../admin/admin-result.js';
import {
  CHANNEL_VIEW,
  channelMessages,
  CREATE_CHANNEL_BODY,
  createChannel,
  deleteChannel,
  listChannels,
  showChannel,
  testChannel,
  UPDATE_CHANNEL_BODY,
  updateChannel,
} from '../admin/channels.js';
import type { TransportOptions } from '../notifications/channel-transports.js';
import type { Notifier } from '../notifications/notifier.js';
import { tellRiskHalted, tellRiskReleased } from '../notifications/risk-events.js';
import {
  agentPageJson,
  CREATE_AGENT_BODY,
  createAgent,
  deleteAgent,
  rotateAgentToken,
  showAgent,
} from '../admin/agents.js';
import { type ListQuery, MAX_LIST_PAGE, DEFAULT_LIST_PAGE } from '../admin/list-query.js';
import { SIGNAL_QUERY, type SignalQuery, showSignal, signalPageJson } from '../admin/signals.js';
import { LEDGER_QUERY, ledgerCsv, ledgerStatisticsOf, ledgerTrades, TRADE_VIEW } from '../admin/ledger.js';
import {
  CREATE_SOURCE_BODY,
  createSource,
  deleteSource,
  listSources,
  ROTATE_KEY_BODY,
  rotateSourceKey,
  showSource,
  UPDATE_SOURCE_BODY,
  updateSource,
} from '../admin/sources.js';
import { ACCOUNT_VIEW, AGENT_VIEW, SOURCE_VIEW } from '../admin/views.js';
import { type JsonSchema, objectSchema, type ObjectSchema, type RouteDescription } from '../openapi/index.js';
import { listeningPublicUrl } from '../config/listening-public-url.js';
import type { Store } from '../store/store.js';
import { CHECK_BODY, checkSignal } from '../admin/check-signal.js';
import { adminActor, checkAdminAccess } from '../dashboard/admin-access.js';
import {
  ACCOUNT_RULES_VIEW,
  AUDIT_QUERY,
  AUDIT_VIEW,
  deleteRiskRules,
  HALT_ANSWER,
  HALT_BODY,
  HALT_VIEW,
  haltTarget,
  HALTS_QUERY,
  listHalts,
  putRiskRules,
  RELEASE_BODY,
  releaseTarget,
  RISK_RULES_BODY,
  riskAudit,
  showRiskRules,
  SOURCE_RULES_VIEW,
} from '../admin/risk.js';
import type { DashboardSessions } from '../dashboard/dashboard-sessions.js';
import { SignalStreams } from '../dashboard/signal-stream.js';
import { useStrictJsonBodies } from './json-body-parser.js';
import { sendProblem } from '../http-kit/send-problem.js';
import type { WrongTokens } from '../http-kit/wrong-tokens.js';
import { ErrorCode } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';

export interface AdminRouteOptions {
  store: Store;
  /** SIGNALGATE_PUBLIC_URL or `http://HOST:PORT`; a port 0 there becomes the port the server got. */
  publicUrl: string;
  /** Whether a presented bearer token is the admin token. */
  isAdminToken: (token: string) => boolean;
  /** Dashboard sign-ins, which the admin API takes in place of the bearer token. */
  sessions: DashboardSessions;
  /** Wrong admin tokens counted per client address, and the addresses that sent too many refused. */
  wrongTokens: WrongTokens;
  /** Where a channel's test message is sent (the Telegram API's base URL, the timeout). */
  notificationTransport: TransportOptions;
  /** Told of halts and releases once committed; null where notifications are off. */
  notifier?: Notifier | null;
}

/** The admin API (docs/admin-api.md), behind the admin bearer token. */
export async function adminRoutes(app: FastifyInstance, opts: AdminRouteOptions): Promise<void> {
  const { store } = opts;
  // Read once the server listens (admin requests only come then), when its port is known.
  let rendered: string | null = null;
  const publicUrl = (): string => {
    if (rendered !== null) return rendered;
    const address = app.server.address();
    if (typeof address !== 'object' || address === null) return opts.publicUrl;
    rendered = listeningPublicUrl(opts.publicUrl, address.port);
    return rendered;
  };

  const access = {
    isAdminToken: opts.isAdminToken,
    sessions: opts.sessions,
    publicUrl: opts.publicUrl,
    wrongTokens: opts.wrongTokens,
  };
  const streams = new SignalStreams(store);
  app.addHook('preClose', async () => streams.closeAll());
  app.addHook('onRequest', async (request, reply) => {
    const refused = await checkAdminAccess(request, reply, access);
    if (refused !== undefined) return refused;
    // A route without a query in its description takes none: `?limit=5` on a show is refused,
    // not ignored. (Routes with one check their own, in their reader.)
    if (request.routeOptions.config.api?.query === undefined && request.routeOptions.url !== SIGNAL_STREAM) {
      const unknown = unknownNames(Object.keys(request.query as object), [], 'query parameter');
      if (unknown.length > 0) return sendProblem(reply, unknown);
    }
  });

  type Id = { Params: { id: string } };
  type List = { Querystring: ListQuery };
  const described = (api: RouteDescription) => ({ config: { api } });
  app.get<List>(
    '/api/admin/accounts',
    described(
      admin('A page of the accounts, newest first', { query: LIST_QUERY, found: page('accounts', ACCOUNT_VIEW) }),
    ),
    async (req, reply) => answer(reply, await listAccounts(store, req.query)),
  );
  app.get<List>(
    '/api/admin/sources',
    described(
      admin('A page of the sources (of one account, or all), newest first', {
        query: ACCOUNT_LIST_QUERY,
        found: page('sources', SOURCE_VIEW),
      }),
    ),
    async (req, reply) => answer(reply, await listSources(store, req.query, publicUrl())),
  );
  app.get<List>(
    '/api/admin/agents',
    described(
      admin('A page of the agents (of one account, or all), newest first', {
        query: ACCOUNT_LIST_QUERY,
        found: page('agents', AGENT_VIEW),
      }),
    ),
    async (req, reply) => answerJson(reply, await agentPageJson(store, req.query)),
  );
  app.get<Id & List>(
    '/api/admin/accounts/:id/usage/daily',
    described(
      admin("The account's signals per day, accepted and rejected apart", {
        query: DAILY_USAGE_QUERY,
        found: DAILY_USAGE,
      }),
    ),
    async (req, reply) => answer(reply, await dailyUsage(store, req.params.id, req.query, Date.now())),
  );
  app.delete<Id>(
    '/api/admin/sources/:id',
    described(admin('Delete a source', { answers: { 204: { description: 'Deleted' } } })),
    async (req, reply) => answer(reply, await deleteSource(store, req.params.id), 204),
  );
  app.delete<Id>(
    '/api/admin/agents/:id',
    described(
      admin('Delete an agent', {
        answers: { 204: { description: 'Deleted' } },
        extraProblems: [ErrorCode.AGENT_ROUTED],
      }),
    ),
    async (req, reply) => answer(reply, await deleteAgent(store, req.params.id), 204),
  );
  app.post(
    '/api/admin/accounts',
    described(
      admin('Create an account', {
        body: CREATE_ACCOUNT_BODY,
        answers: { 201: { description: 'The account', schema: ACCOUNT_VIEW } },
      }),
    ),
    async (req, reply) => answer(reply, await createAccount(store, req.body, Date.now()), 201),
  );
  app.get<Id>(
    '/api/admin/accounts/:id',
    described(admin('Show an account', { found: ACCOUNT_VIEW })),
    async (req, reply) => answer(reply, await showAccount(store, req.params.id)),
  );
  app.patch<Id>(
    '/api/admin/accounts/:id',
    described(admin('Rename an account or change its quota', { body: UPDATE_ACCOUNT_BODY, found: ACCOUNT_VIEW })),
    async (req, reply) => answer(reply, await updateAccount(store, req.params.id, req.body)),
  );
  app.get<Id>(
    '/api/admin/accounts/:id/usage',
    described(admin("The account's usage this month", { found: USAGE })),
    async (req, reply) => answer(reply, await accountUsage(store, req.params.id, Date.now())),
  );
  app.post<Id>(
    '/api/admin/accounts/:id/agents',
    described(
      admin('Create an agent of the account', {
        body: CREATE_AGENT_BODY,
        answers: { 201: { description: 'The agent with its token, shown only here', schema: NEW_AGENT } },
      }),
    ),
    async (req, reply) => answer(reply, await createAgent(store, req.params.id, req.body, Date.now()), 201),
  );
  app.get<Id>('/api/admin/agents/:id', described(admin('Show an agent', { found: AGENT_VIEW })), async (req, reply) =>
    answer(reply, await showAgent(store, req.params.id)),
  );
  app.post(
    '/api/admin/sources',
    described(
      admin('Create a source', {
        body: CREATE_SOURCE_BODY,
        answers: { 201: { description: 'The source with its inbound URL', schema: SOURCE_VIEW } },
      }),
    ),
    async (req, reply) => answer(reply, await createSource(store, req.body, Date.now(), publicUrl()), 201),
  );
  app.get<Id>('/api/admin/sources/:id', described(admin('Show a source', { found: SOURCE_VIEW })), async (req, reply) =>
    answer(reply, await showSource(store, req.params.id, publicUrl())),
  );
  app.patch<Id>(
    '/api/admin/sources/:id',
    described(admin('Change a source', { body: UPDATE_SOURCE_BODY, found: SOURCE_VIEW })),
    async (req, reply) => answer(reply, await updateSource(store, req.params.id, req.body, Date.now(), publicUrl())),
  );
  // In a scope of its own: its JSON parser takes an empty body, which the other routes refuse.
  await app.register(async (scope) => {
    useStrictJsonBodies(scope, { emptyIsNoBody: true });
    scope.post<Id>(
      '/api/admin/sources/:id/rotate-key',
      described(
        admin('Give the source a new key; the old one stops working at once', {
          body: ROTATE_KEY_BODY,
          optionalBody: true,
          found: SOURCE_VIEW,
        }),
      ),
      async (req, reply) =>
        answer(reply, await rotateSourceKey(store, req.params.id, req.body, Date.now(), publicUrl())),
    );
    scope.post<Id>(
      '/api/admin/channels/:id/test',
      described(
        admin('Send a test message through the channel now; the answer says whether its receiver took it', {
          body: NO_FIELDS_BODY,
          optionalBody: true,
          found: objectSchema(
            { sent: { type: 'boolean' }, error: { type: ['string', 'null'], description: 'what went wrong' } },
            ['sent', 'error'],
          ),
        }),
      ),
      async (req, reply) =>
        answer(
          reply,
          await testChannel(store, req.params.id, req.body, {
            transport: opts.notificationTransport,
            dashboardUrl: publicUrl(),
            nowMillis: Date.now(),
          }),
        ),
    );
    for (const target of ['accounts', 'sources', 'agents'] as const) {
      const kind = HALT_SCOPES[target];
      scope.post<Id>(
        `/api/admin/${target}/:id/release`,
        described(
          admin(`Release the ${kind}'s halt (by hand only); what came while halted stays halted`, {
            body: RELEASE_BODY,
            optionalBody: true,
            found: HALT_VIEW,
          }),
        ),
        async (req, reply) => {
          const result = await releaseTarget(store, kind, req.params.id, req.body, adminActor(req), Date.now());
          if (result.ok && opts.notifier) {
            const halt = result.value;
            tellRiskReleased(opts.notifier, {
              accountId: halt.accountId,
              target: { type: halt.scope, id: halt.targetId },
              by: halt.releasedBy ?? adminActor(req),
              haltedAt: halt.haltedAt,
              ...(halt.releasedAt !== null && { at: halt.releasedAt }),
            });
          }
          return answer(reply, result);
        },
      );
    }
    scope.post<Id>(
      '/api/admin/agents/:id/rotate-token',
      described(
        admin('Give the agent a new token; the old one stops working at once', {
          body: NO_FIELDS_BODY,
          optionalBody: true,
          answers: { 200: { description: 'The agent with its new token, shown only here', schema: NEW_AGENT } },
        }),
      ),
      async (req, reply) => answer(reply, await rotateAgentToken(store, req.params.id, req.body)),
    );
  });
  for (const target of ['accounts', 'sources'] as const) {
    const kind = target === 'accounts' ? 'account' : 'source';
    const view = target === 'accounts' ? ACCOUNT_RULES_VIEW : SOURCE_RULES_VIEW;
    app.get<Id>(
      `/api/admin/${target}/:id/risk-rules`,
      described(admin(`The ${kind}'s risk rules and what they come to for a signal`, { found: view })),
      async (req, reply) => answer(reply, await showRiskRules(store, kind, req.params.id)),
    );
    app.put<Id>(
      `/api/admin/${target}/:id/risk-rules`,
      described(
        admin(
          target === 'accounts'
            ? "Set the account's risk rules (the whole set; audited)"
            : "Set the source's risk rules: they only tighten its account's (the whole set; audited)",
          { body: RISK_RULES_BODY, found: view },
        ),
      ),
      async (req, reply) =>
        answer(reply, await putRiskRules(store, kind, req.params.id, req.body, adminActor(req), Date.now())),
    );
    app.delete<Id>(
      `/api/admin/${target}/:id/risk-rules`,
      described(admin(`Remove the ${kind}'s risk rules (audited)`, { answers: { 204: { description: 'Removed' } } })),
      async (req, reply) =>
        answer(reply, await deleteRiskRules(store, kind, req.params.id, adminActor(req), Date.now()), 204),
    );
  }
  for (const target of ['accounts', 'sources', 'agents'] as const) {
    const kind = HALT_SCOPES[target];
    app.post<Id>(
      `/api/admin/${target}/:id/halt`,
      described(
        admin(`Halt the ${kind}: its signals are still answered and logged, as halted, and never delivered (audited)`, {
          body: HALT_BODY,
          answers: {
            200: { description: 'It was halted already: the halt in force', schema: HALT_ANSWER },
            201: { description: 'Halted', schema: HALT_ANSWER },
          },
        }),
      ),
      async (req, reply) => {
        const result = await haltTarget(store, kind, req.params.id, req.body, adminActor(req), Date.now());
        if (result.ok && !result.value.alreadyHalted && opts.notifier) {
          const halt = result.value.halt;
          tellRiskHalted(opts.notifier, {
            accountId: halt.accountId,
            target: { type: halt.scope, id: halt.targetId },
            reason: halt.reason,
            by: halt.haltedBy,
            flatten: halt.flatten,
            at: halt.haltedAt,
          });
        }
        return answer(reply, result, result.ok && !result.value.alreadyHalted ? 201 : 200);
      },
    );
  }
  app.get<List>(
    '/api/admin/halts',
    described(
      admin('The halts in force (or all), newest first', {
        query: HALTS_QUERY,
        found: objectSchema({ halts: { type: 'array', items: HALT_VIEW } }, ['halts']),
      }),
    ),
    async (req, reply) => answer(reply, await listHalts(store, req.query)),
  );
  app.get<List>(
    '/api/admin/risk-audit',
    described(
      admin('The audit log of risk rules, halts and flattens, newest first', { query: AUDIT_QUERY, found: AUDIT_VIEW }),
    ),
    async (req, reply) => answer(reply, await riskAudit(store, req.query)),
  );
  app.post<Id>(
    '/api/admin/accounts/:id/channels',
    described(
      admin('Create a notification channel of the account (its secrets are never shown again)', {
        body: CREATE_CHANNEL_BODY,
        answers: { 201: { description: 'The channel', schema: CHANNEL_VIEW } },
      }),
    ),
    async (req, reply) => answer(reply, await createChannel(store, req.params.id, req.body, Date.now()), 201),
  );
  app.get<{ Querystring: Record<string, unknown> }>(
    '/api/admin/channels',
    described(
      admin('The notification channels (of one account, or all), oldest first', {
        query: objectSchema({ accountId: { type: 'string', minLength: 1, description: "only this account's" } }),
        found: objectSchema({ channels: { type: 'array', items: CHANNEL_VIEW } }, ['channels']),
      }),
    ),
    async (req, reply) => answer(reply, await listChannels(store, req.query)),
  );
  app.get<Id>(
    '/api/admin/channels/:id',
    described(admin('Show a notification channel with its sending state', { found: CHANNEL_VIEW })),
    async (req, reply) => answer(reply, await showChannel(store, req.params.id)),
  );
  app.get<Id>(
    '/api/admin/channels/:id/messages',
    described(admin("The channel's latest messages, newest first", { found: CHANNEL_MESSAGES })),
    async (req, reply) => answer(reply, await channelMessages(store, req.params.id)),
  );
  app.patch<Id>(
    '/api/admin/channels/:id',
    described(
      admin('Change a notification channel (given secrets replace the kept ones)', {
        body: UPDATE_CHANNEL_BODY,
        found: CHANNEL_VIEW,
      }),
    ),
    async (req, reply) => answer(reply, await updateChannel(store, req.params.id, req.body)),
  );
  app.delete<Id>(
    '/api/admin/channels/:id',
    described(
      admin('Delete a notification channel and what waits for it', { answers: { 204: { description: 'Deleted' } } }),
    ),
    async (req, reply) => answer(reply, await deleteChannel(store, req.params.id), 204),
  );
  app.get<{ Querystring: SignalQuery }>(
    '/api/admin/signals',
    described(admin('A page of the signal log, newest first', { query: SIGNAL_QUERY, found: SIGNAL_PAGE })),
    async (req, reply) => answerJson(reply, await signalPageJson(store, req.query)),
  );
  app.get<{ Querystring: SignalQuery }>(SIGNAL_STREAM, async (req, reply) => streams.serve(req, reply));
  type LedgerGet = { Querystring: Record<string, unknown> };
  app.get<LedgerGet>(
    '/api/admin/ledger/trades',
    described(
      admin("The account's trades, built from the fills its agents reported, oldest entry first", {
        query: LEDGER_QUERY,
        found: objectSchema({ trades: { type: 'array', items: TRADE_VIEW } }, ['trades']),
      }),
    ),
    async (req, reply) => answer(reply, await ledgerTrades(store, req.query)),
  );
  app.get<LedgerGet>(
    '/api/admin/ledger/trades.csv',
    described(
      admin('The same trades as CSV, a header line first', {
        query: LEDGER_QUERY,
        answers: { 200: { description: 'The trades', mediaType: 'text/csv', schema: { type: 'string' } } },
      }),
    ),
    async (req, reply) => {
      const result = await ledgerCsv(store, req.query);
      if (!result.ok) return sendProblem(reply, result.problems);
      return reply
        .code(200)
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="trades.csv"')
        .send(result.value);
    },
  );
  app.get<LedgerGet>(
    '/api/admin/ledger/statistics',
    described(
      admin(
        "The figures of the account's closed trades over the period (docs/ledger.md), whole and per source and strategy, and latency and slippage per source and venue",
        {
          query: LEDGER_QUERY,
          found: LEDGER_STATISTICS,
        },
      ),
    ),
    async (req, reply) => answer(reply, await ledgerStatisticsOf(store, req.query)),
  );
  app.post(
    '/api/admin/check',
    described(
      admin('Check a signal as the inbound endpoint would judge it, storing nothing', {
        body: CHECK_BODY,
        found: CHECK_ANSWER,
      }),
    ),
    async (req, reply) => answer(reply, checkSignal(req.body)),
  );
  app.get<Id>(
    '/api/admin/signals/:id',
    described(admin('Show a signal with its deliveries', { found: SIGNAL })),
    async (req, reply) => answer(reply, await showSignal(store, req.params.id)),
  );
}

const HALT_SCOPES = { accounts: 'account', sources: 'source', agents: 'agent' } as const;
const USAGE = objectSchema(
  {
    period: { type: 'string', examples: ['2026-11'] },
    used: { type: 'integer' },
    limit: { type: 'integer' },
    resetsAt: { type: 'string', format: 'date-time' },
  },
  ['period', 'used', 'limit', 'resetsAt'],
);
const NEW_AGENT = objectSchema(
  {
    id: { type: 'string' },
    name: { type: 'string' },
    accountId: { type: 'string' },
    token: { type: 'string', description: "the agent's bearer token; store it, it is not shown again" },
    createdAt: { type: 'string', format: 'date-time' },
  },
  ['id', 'name', 'accountId', 'token', 'createdAt'],
);
const TIME_OR_NULL: JsonSchema = { type: ['string', 'null'], format: 'date-time' };
const SIGNAL: JsonSchema = {
  type: 'object',
  description: 'a signal log record: the request, its outcome, the normalized signal and its deliveries',
  properties: {
    receivedAt: { type: 'string', format: 'date-time', description: 'when the server received the request' },
    deliveries: {
      type: 'array',
      description: "each agent's delivery (only when one signal is shown)",
      items: {
        type: 'object',
        properties: {
          deliveredAt: { ...TIME_OR_NULL, description: 'first handed to the agent' },
          ackedAt: { ...TIME_OR_NULL, description: 'the server took the acknowledgement' },
          timings: {
            type: ['object', 'null'],
            description:
              "the agent's times from its acknowledgement (its clock): the engine decided, the first order left, the venue answered it, the agent learnt it filled; null for an agent that sends none",
            properties: {
              decidedAt: TIME_OR_NULL,
              sentAt: TIME_OR_NULL,
              venueAckedAt: TIME_OR_NULL,
              filledAt: TIME_OR_NULL,
            },
          },
        },
      },
    },
  },
};
const SIGNAL_PAGE = objectSchema(
  {
    signals: { type: 'array', items: SIGNAL },
    next: { type: ['string', 'null'], description: 'pass as before for the following page' },
  },
  ['signals', 'next'],
);

/** The live log: server-sent events, so undescribed; it takes the log's filters and checks them itself. */
const SIGNAL_STREAM = '/api/admin/signals/stream';
const FIGURES: JsonSchema = {
  type: 'object',
  description:
    'trades, openTrades, wins, losses, winRate, netProfit, grossProfit, grossLoss, averageWin, averageLoss, profitFactor, largestLoss, fees, funding, maxDrawdown {amount, percent, peakAt, troughAt}, equityCurve [{time, equity}]',
};
const GROUPS: JsonSchema = {
  type: 'array',
  items: objectSchema({ key: { type: ['string', 'null'] }, statistics: FIGURES }),
};
const PATHS: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    description:
      'key, trades, latencyMs {count, median, p95}, slippagePips {count, median, p95}, slippage (one symbol only)',
  },
};
const LEDGER_STATISTICS = objectSchema(
  { statistics: FIGURES, bySource: GROUPS, byStrategy: GROUPS, latencyBySource: PATHS, latencyByVenue: PATHS },
  ['statistics', 'bySource', 'byStrategy', 'latencyBySource', 'latencyByVenue'],
);

/** The query of the record lists; readListQuery checks requests against the same names. */
const LIST_FIELDS: Record<string, JsonSchema> = {
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_LIST_PAGE,
    default: DEFAULT_LIST_PAGE,
    description: 'records per page',
  },
  before: { type: 'string', minLength: 1, description: "the previous page's next: the page of records older than it" },
};
const LIST_QUERY = objectSchema(LIST_FIELDS);
const ACCOUNT_LIST_QUERY = objectSchema({
  accountId: { type: 'string', minLength: 1, description: "only this account's records", examples: ['acc_0123'] },
  ...LIST_FIELDS,
});
const DAILY_USAGE_QUERY = objectSchema({
  days: { type: 'integer', minimum: 1, description: 'how many days back, today included' },
});
const DAILY_USAGE = objectSchema(
  {
    accountId: { type: 'string' },
    from: { type: 'string', format: 'date' },
    to: { type: 'string', format: 'date' },
    days: {
      type: 'array',
      items: objectSchema(
        { day: { type: 'string', format: 'date' }, accepted: { type: 'integer' }, rejected: { type: 'integer' } },
        ['day', 'accepted', 'rejected'],
      ),
    },
  },
  ['accountId', 'from', 'to', 'days'],
);
/** A page of one kind of record, newest first. */
function page(name: string, item: JsonSchema): ObjectSchema {
  return objectSchema(
    {
      [name]: { type: 'array', items: item },
      next: { type: ['string', 'null'], description: 'pass as before for the following page' },
    },
    [name, 'next'],
  );
}
const CHANNEL_MESSAGES = objectSchema(
  {
    messages: {
      type: 'array',
      items: {
        type: 'object',
        description:
          'id, event, count (events digested into it), state (pending, sent, abandoned), attempts, lastError, firstAt, lastAt',
      },
    },
  },
  ['messages'],
);
const NO_FIELDS_BODY = objectSchema({}, [], 'no fields: send no body, or {}');
const CHECK_ANSWER: JsonSchema = {
  type: 'object',
  description:
    'valid with the format and the normalized signal, or not valid with the HTTP status, code and problems the endpoint would answer; for a TradingView alert message with {{...}} placeholders also `template`: {placeholders: [{written, becomes, note?}], warnings, checked: [{values, body, valid, ...}]}, each message it can turn into judged, the answer being that of the first refused (or of the sample values)',
};

/**
 * An admin route's description: the admin token, the problems every admin route may answer,
 * and its own body or query schema (the one its reader checks requests with).
 */
function admin(
  summary: string,
  opts: {
    body?: ObjectSchema;
    optionalBody?: boolean;
    query?: ObjectSchema;
    found?: JsonSchema;
    answers?: RouteDescription['answers'];
    extraProblems?: ErrorCode[];
  },
): RouteDescription {
  return {
    summary,
    tag: 'admin',
    auth: 'admin',
    ...(opts.body === undefined ? {} : { body: { schema: opts.body, required: opts.optionalBody !== true } }),
    ...(opts.query === undefined ? {} : { query: opts.query }),
    answers: opts.answers ?? {
      200: { description: 'Done', ...(opts.found === undefined ? {} : { schema: opts.found }) },
    },
    problems: [
      ErrorCode.UNAUTHORIZED,
      ErrorCode.TOO_MANY_WRONG_TOKENS,
      ErrorCode.NOT_FOUND,
      ...(opts.body === undefined && opts.query === undefined
        ? []
        : [ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_FIELD]),
      ...(opts.body === undefined ? [] : [ErrorCode.PAYLOAD_TOO_LARGE, ErrorCode.UNSUPPORTED_MEDIA_TYPE]),
      ...(opts.extraProblems ?? []),
    ],
  };
}

/**
 * An answer already written as JSON, its text or its UTF-8 bytes: sent as it is, with the type
 * Fastify gives the JSON it writes (a Buffer keeps the type set here).
 */
function answerJson(reply: FastifyReply, result: AdminResult<string | Buffer>): FastifyReply {
  if (!result.ok) return sendProblem(reply, result.problems);
  return reply.code(200).type('application/json; charset=utf-8').send(result.value);
}

function answer<T>(reply: FastifyReply, result: AdminResult<T>, status = 200): FastifyReply {
  if (!result.ok) return sendProblem(reply, result.problems);
  if (status === 204) return reply.code(204).send();
  return reply.code(status).send(result.value);
}
