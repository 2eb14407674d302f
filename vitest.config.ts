import { defineConfig } from 'vitest/config';

/**
 * Pure modules run once; everything that stores or serves runs twice, once on the embedded
 * SQLite store and once on PostgreSQL: SIGNALGATE_TEST_DATABASE_URL's server, or, where it is unset,
 * a private throwaway cluster the run starts and removes (test/support/private-postgres.ts). Before
 * anything runs, the build in dist/ must be newer than src/ (test/support/fresh-build.ts).
 *
 * Most files wait on processes, sockets and disks more than they compute, so they run two at a
 * time. The few that hold the service to a deadline it promises (an answer within 3 s while the
 * store fails, serving within 5 s of a restart, slow clients cut within seconds) run afterwards,
 * one at a time, so that a neighbouring test's load cannot make them miss it.
 */
const serving = ['test/http/**/*.test.ts', 'test/delivery/**/*.test.ts', 'test/agent/**/*.test.ts', 'test/cli/admin*.test.ts', 'test/cli/backup*.test.ts'];
const pure = ['test/language/**/*.test.ts', 'test/engine/**/*.test.ts', 'test/cli/parse*.test.ts', 'test/cli/simulate*.test.ts', 'test/cli/documented-*.test.ts', 'test/build/**/*.test.ts', 'test/venues/**/*.test.ts'];
const coreDeadlines = ['test/store/store-outage.test.ts'];
const servingDeadlines = ['test/http/restart-after-kill.test.ts', 'test/http/slow-clients.test.ts', 'test/agent/paper-restart.test.ts'];
const deadlines = [...coreDeadlines, ...servingDeadlines];
const core = [...pure, 'test/store/**/*.test.ts', 'test/logging/**/*.test.ts', 'test/security/**/*.test.ts'];

const together = { maxWorkers: 2, sequence: { groupOrder: 0 } };
const alone = { maxWorkers: 1, sequence: { groupOrder: 1 } };
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
      { extends: true, test: { name: 'core', include: core, exclude: deadlines, ...together } },
      { extends: true, test: { name: 'sqlite', include: serving, exclude: deadlines, env: sqlite, ...together } },
      { extends: true, test: { name: 'postgres', include: serving, exclude: deadlines, env: postgres, ...together } },
      // The dashboard in Debian's Chromium: the flows once, on the embedded store.
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'], env: sqlite, ...together } },
      { extends: true, test: { name: 'core-deadlines', include: coreDeadlines, ...alone } },
      { extends: true, test: { name: 'sqlite-deadlines', include: servingDeadlines, env: sqlite, ...alone } },
      { extends: true, test: { name: 'postgres-deadlines', include: servingDeadlines, env: postgres, ...alone } },
    ],
  },
});
