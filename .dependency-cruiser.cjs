/**
 * Import cycles in src/, type-only imports included: a cycle through types still ties two files
 * into one unit a reader cannot take apart. (eslint-plugin-import-x's no-cycle does not follow
 * type-only imports, so this check lives here; the folder map lives in eslint.config.js.)
 */
module.exports = {
  forbidden: [
    {
      name: 'no-import-cycle',
      severity: 'error',
      comment: 'Break the cycle: move what both files need into a file of its own that both import.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
