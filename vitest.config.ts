import { defineConfig } from 'vitest/config';

/**
 * Which project a test file runs in follows from its folder, so a new file lands by where it is:
 *
 * - test/http, test/delivery, test/cli (but parse, simulate, documented-*, command-*): what the server stores
 *   and serves, run twice, once on the embedded SQLite store and once on PostgreSQL (but the
 *   store-blind files below, once on SQLite)
 *   (SIGNALGATE_TEST_DATABASE_URL's server, or, where it is unset, a private throwaway cluster
 *   the run starts and removes: test/support/private-postgres.ts).
 * - test/agent: the agent process, run once, on SQLite. The agent keeps its own files and talks
 *   to the server over HTTP; the server's store only queues and records deliveries, which
 *   test/delivery covers on both stores.
 * - test/browser: the dashboard in Debian's Chromium, once, on SQLite.
 * - everything else (language, engine, venues, store, logging, security, build…): once; the
 *   store tests open both stores themselves.
 *
 * Before anything runs, the build in dist/ must be newer than src/ (test/support/fresh-build.ts).
 *
 * Most files wait on processes, sockets and disks more than they compute, so they run several at
 * a time (SIGNALGATE_TEST_WORKERS below). Files share their worker process (`isolate: false`):
 * each file's modules are loaded once per worker, not once per file, which was about half the
 * CPU of a serving or delivery file (decision 0049-test-time-shared-workers). A file that replaces a module
 * (`vi.mock`) needs a registry of its own: it goes in `ownModules`.
 *
 * The few that hold the service to a deadline it promises (an answer within 3 s while the store
 * fails, serving within 5 s of a restart, slow clients cut within seconds) run afterwards, all
 * at once, each in a fresh worker, so that the load of the many files before them cannot make
 * them miss it. They mostly wait (on timeouts, restarts, a stalled store), so together they keep
 * their margin (decisions 0049, 0070).
 */
const bothStores = [
  'test/http/**/*.test.ts',
  'test/delivery/**/*.test.ts',
  'test/cli/!(parse|simulate|documented-|command-)*.test.ts',
];
// What happens before or around the store, the same on either: the HTTP edges (framing, body
// limits, hostile bodies, headers, TLS, client addresses, wrong keys and tokens), the API
// description and the documentation's examples, and CLI formatting over admin operations the
// API tests run on both. They run once, on SQLite (decision 0026).
const storeBlind = [
  'test/http/{hostile-bodies,framing,json-body-limits,security-headers,tls,reverse-proxy,client-address}.test.ts',
  'test/http/{wrong-tokens,wrong-tokens-bound,wrong-keys,openapi,tradingview-doc,same-explanation}.test.ts',
  'test/http/{signature-timestamp,allowed-ips,routing,signal-check}.test.ts',
  'test/delivery/{websocket-limits,upgrade-log,agent-auth}.test.ts',
  'test/cli/{admin-lists-cli,admin-secret-file,admin-cli-refusals}.test.ts',
];
const agent = ['test/agent/**/*.test.ts'];
// Files that replace a module with vi.mock: a module another file loaded first in the same
// worker would be the real one, so these run each in a fresh worker.
export const ownModules = ['test/venues/fix-state-files.test.ts'];
const browser = ['test/browser/**/*.test.ts'];

// The deadlines below are the agent's, the data directory's (SQLite only) and the HTTP server's
// timeouts, the same whichever store the server has: they run once, on SQLite.
const coreDeadlines = ['test/store/store-outage.test.ts'];
const sqliteDeadlines = [
  'test/agent/paper-restart-after-kill.test.ts',
  'test/http/restart-after-kill.test.ts',
  'test/http/slow-clients.test.ts',
];
const deadlines = [...coreDeadlines, ...sqliteDeadlines];

// SIGNALGATE_TEST_WORKERS sets how many files run at a time (4 unless set: most wait on processes
// and sockets, using about a fifth of a core each; decision 0026).
const workers = Number(process.env.SIGNALGATE_TEST_WORKERS ?? '') || 4;
const together = { maxWorkers: workers, isolate: false, sequence: { groupOrder: 0 } };
// The deadline files, all at once, each in a fresh worker.
const alone = { maxWorkers: deadlines.length, isolate: true, sequence: { groupOrder: 1 } };
const sqlite = { SIGNALGATE_TEST_STORE: 'sqlite' };
const postgres = { SIGNALGATE_TEST_STORE: 'postgres' };

export default defineConfig({
  test: {
    // Guards against a hang, not deadlines: under load (two files at a time beside other work)
    // agent process tests were seen at 35-40 s, too close to a 60 s bound. The waits inside
    // the tests fail sooner, with what they waited for, when something stalls.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['test/support/fresh-build.ts', 'test/support/private-postgres.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'core',
          include: ['test/**/*.test.ts'],
          exclude: [...bothStores, ...agent, ...browser, ...deadlines, ...ownModules],
          ...together,
        },
      },
      {
        extends: true,
        test: { name: 'core-own-modules', include: ownModules, ...together, isolate: true },
      },
      {
        extends: true,
        test: { name: 'sqlite', include: [...bothStores, ...agent], exclude: deadlines, env: sqlite, ...together },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: bothStores,
          exclude: [...deadlines, ...storeBlind],
          env: postgres,
          ...together,
        },
      },
      { extends: true, test: { name: 'browser', include: browser, env: sqlite, ...together } },
      { extends: true, test: { name: 'core-deadlines', include: coreDeadlines, ...alone } },
      { extends: true, test: { name: 'sqlite-deadlines', include: sqliteDeadlines, env: sqlite, ...alone } },
    ],
  },
});
