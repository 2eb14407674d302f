/**
 * Import cycles in src/, bench/ and test/, type-only imports included: a cycle through types still ties two files
 * into one unit a reader cannot take apart. Folder cycles in src/ too: a folder that imports one that imports it
 * back is no layer. (eslint-plugin-import-x's no-cycle does not follow
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
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment:
        'The folders of src/ are layers: each imports only folders below it (the folder map, docs/architecture.md). ' +
        'Move what both folders need down into a folder both may import, or hand it in from the folder above both.',
      // Folder level: every file of a folder (its subfolders included) counts as the folder's, so two
      // folders leaning on each other through different files fail here, where no file cycle does.
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'product-stands-alone',
      severity: 'error',
      comment: 'src/ is what ships: it imports nothing from the benchmark (bench/) or the tests (test/).',
      from: { path: '^src/' },
      to: { path: '^(bench|test)/' },
    },
    {
      name: 'tests-without-benchmark',
      severity: 'error',
      comment: 'A fake or helper that the tests and the benchmark share lives under test/, not bench/.',
      from: { path: '^test/' },
      to: { path: '^bench/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
