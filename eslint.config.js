import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The folder map: which folder of src/ may import which (besides itself and packages). An import
 * of any other folder fails `npm run lint`. Derived from the imports the code has, mapped to the
 * target layout, and kept as strict as that code allows: widen a row only for a dependency that
 * belongs there, never to silence a wrong-way import.
 */
const MAY_IMPORT = {
  errors: [],
  // The pure core: no I/O, so nothing outside itself but the error catalog (see PURE below).
  language: ['errors'],
  engine: ['language', 'errors'],
  // Risk rules and their checks, pure: the server narrows and hands them out, the agent checks them.
  risk: ['engine', 'language', 'errors'],
  // The trader's ledger, pure: fills into trades, and the figures computed from trades.
  ledger: ['engine', 'language', 'errors'],
  config: ['security'],
  metering: [],
  security: ['store'],
  logging: ['security'],
  // The wire types shared by the server's delivery side and the agent.
  protocol: ['language', 'risk', 'ledger', 'errors'],
  // The API description: the schema and route-description types, the OpenAPI document and page.
  openapi: ['errors'],
  // The store names where its inbound lane runs; the lanes themselves live in src/inbound.
  store: ['protocol', 'risk', 'ledger', 'language', 'files', 'errors'],
  // What the HTTP edges below the server share: problem answers, bearer tokens, the client's address, drain state, body limits.
  'http-kit': ['security', 'language', 'errors'],
  inbound: ['store', 'security', 'metering', 'logging', 'http-kit', 'metrics', 'language', 'openapi', 'errors'],
  // The signal checker judges a body through inbound's judgeBody, as the endpoint does.
  admin: [
    'store',
    'ledger',
    'inbound',
    'security',
    'metering',
    'config',
    'language',
    'openapi',
    'errors',
    'notifications',
    'risk',
  ],
  // Notifications: the event catalog, message wording, channel transports, the outbox's sender.
  notifications: ['store', 'errors'],
  // The server, composed: it builds on every edge below it, and nothing below imports it.
  http: [
    'notifications',
    'http-kit',
    'inbound',
    'admin',
    'dashboard',
    'store',
    'metrics',
    'logging',
    'config',
    'security',
    'language',
    'openapi',
    'errors',
  ],
  // The dashboard's server side: its page, sign-in sessions, the live log; the rest is the admin API.
  dashboard: ['admin', 'http-kit', 'store', 'openapi', 'errors', 'notifications'],
  delivery: [
    'protocol',
    'inbound',
    'http-kit',
    'store',
    'security',
    'logging',
    'openapi',
    'errors',
    'process',
    'notifications',
  ],
  // The agent talks to the server over the wire only: never store/ or delivery/ (see PENDING).
  agent: ['protocol', 'risk', 'engine', 'language', 'process', 'files', 'errors'],
  // Counters the hot paths add to, read by GET /metrics (and the store, for queue depths).
  metrics: ['store', 'protocol'],
  service: [
    'notifications',
    'http',
    'http-kit',
    'dashboard',
    'delivery',
    'inbound',
    'store',
    'security',
    'config',
    'process',
    'files',
    'metrics',
  ],
  // `signalgate parse` judges a body through inbound's judgeBody, as the endpoint does.
  // Secrets read from files rather than flags, as the agent reads its token.
  cli: [
    'notifications',
    'service',
    'admin',
    'agent',
    'inbound',
    'store',
    'logging',
    'config',
    'engine',
    'ledger',
    'language',
    'files',
    'errors',
  ],
  // The single-process lock (SQLite's own lock on a lock file, through better-sqlite3).
  process: [],
  // Durable file helpers (create a directory, replace a file atomically, read a secret's file), for the store, the agents and the CLI.
  files: [],
};

/**
 * Imports the map forbids that today's code still makes. Each entry is a rule switched off until
 * the work it names lands; delete the entry to switch the rule on.
 */
const PENDING = {};

/** Folders whose inner files nobody outside imports: their index.ts is their one face. */
const FACED = ['language', 'engine'];

/** Pure folders: no package and no node: module, so no I/O, clock or globals come in. */
const PURE = ['language', 'engine', 'risk', 'ledger', 'errors'];

const srcFolders = readdirSync(path.join(import.meta.dirname, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
for (const folder of srcFolders) {
  if (!(folder in MAY_IMPORT)) {
    throw new Error(
      `src/${folder} is not in the folder map: add it to MAY_IMPORT in eslint.config.js with the folders it may import`,
    );
  }
}

const folderZones = Object.keys(MAY_IMPORT).map((folder) => {
  const row = folder;
  const allowed = [row, ...MAY_IMPORT[row], ...(PENDING[row] ?? [])];
  return {
    target: `./src/${folder}`,
    from: './src',
    except: allowed.map((name) => `./${name}`),
    message: `src/${folder} may import only ${MAY_IMPORT[row].map((name) => `src/${name}`).join(', ') || 'itself'} (the folder map in eslint.config.js)`,
  };
});

/**
 * src/ is the product, and the product alone is built and shipped: it imports nothing from the
 * benchmark (bench/) or the tests (test/). The benchmark may use the product and the tests'
 * fakes and helpers; the tests do not use the benchmark.
 */
const outsideZones = [
  { target: './src', from: './bench', message: 'src/ is the product: it never imports the benchmark (bench/)' },
  {
    target: './src',
    from: './test',
    message: 'src/ is the product: it never imports the tests (test/); a helper both need belongs in src/',
  },
  {
    target: './test',
    from: './bench',
    message: 'the tests do not import the benchmark: a fake or helper both use lives under test/',
  },
];

const faceZones = FACED.flatMap((faced) =>
  Object.keys(MAY_IMPORT)
    .filter((folder) => folder !== faced)
    .map((folder) => ({
      target: `./src/${folder}`,
      from: `./src/${faced}`,
      except: ['./index.ts'],
      message: `import src/${faced}/index.js, the folder's one face, not its inner files`,
    })),
);

/** The error codes of the catalog: outside src/errors they are named (ErrorCode.X), never spelt. */
const errorCodes = [
  ...readFileSync(path.join(import.meta.dirname, 'src/errors/catalog.ts'), 'utf8').matchAll(
    /^ {2}([A-Z][A-Z_]+): \{ status/gm,
  ),
].map((match) => match[1]);
const spelledCode = `/\\b(${errorCodes.join('|')})\\b/`;

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // The layout: the folder map, the faces of language/ and engine/, and what stays out of src/. (Import cycles are
    // checked by dependency-cruiser, .dependency-cruiser.cjs, which also follows type-only imports.)
    files: ['src/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.js'], extensionAlias: { '.js': ['.ts', '.js'] } }),
      ],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: [...folderZones, ...faceZones, ...outsideZones] }],
    },
  },
  {
    files: PURE.map((folder) => `src/${folder}/**/*.ts`),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^[^.]', message: 'src/language, src/engine and src/errors are pure: no package or node: module' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/errors/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: `Literal[value=${spelledCode}]`,
          message: 'name the error code from src/errors/catalog.ts (ErrorCode.X) rather than spelling it',
        },
        {
          selector: `TemplateElement[value.raw=${spelledCode}]`,
          message: 'name the error code from src/errors/catalog.ts (${ErrorCode.X}) rather than spelling it',
        },
      ],
    },
  },
  {
    // CCXT's error classes differ between its two builds: every value from it comes from one place.
    files: ['src/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'ccxt',
              allowTypeImports: true,
              message: 'take ccxt from src/agent/venues/ccxt/ccxt-library.ts (its error classes must be the same ones)',
            },
          ],
        },
      ],
    },
  },
  {
    // dependency-cruiser reads its configuration as CommonJS.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } },
  },
  {
    // The dashboard's modules run in the browser.
    files: ['web/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    // Tests read answers as parsed JSON and assert on their shape.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
