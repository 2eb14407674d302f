import { defineConfig } from 'vitest/config';

/**
 * Pure modules run once; everything that stores or serves runs twice, once on the embedded
 * SQLite store and once on PostgreSQL (SIGNALGATE_TEST_DATABASE_URL, default the local server).
 */
const serving = ['test/http/**/*.test.ts', 'test/delivery/**/*.test.ts', 'test/agent/**/*.test.ts', 'test/cli/admin*.test.ts', 'test/cli/backup*.test.ts'];
const pure = ['test/language/**/*.test.ts', 'test/engine/**/*.test.ts', 'test/cli/parse*.test.ts', 'test/cli/simulate*.test.ts', 'test/cli/documented-*.test.ts', 'test/venues/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'core', include: [...pure, 'test/store/**/*.test.ts', 'test/logging/**/*.test.ts', 'test/security/**/*.test.ts'] } },
      { extends: true, test: { name: 'sqlite', include: serving, env: { SIGNALGATE_TEST_STORE: 'sqlite' } } },
      { extends: true, test: { name: 'postgres', include: serving, env: { SIGNALGATE_TEST_STORE: 'postgres' } } },
      // The dashboard in Debian's Chromium: the flows once, on the embedded store.
      { extends: true, test: { name: 'browser', include: ['test/browser/**/*.test.ts'], env: { SIGNALGATE_TEST_STORE: 'sqlite' } } },
    ],
  },
});
