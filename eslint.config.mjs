import nx from '@nx/eslint-plugin';

/**
 * Module boundaries: apps compose libs; libs only point "down".
 *   type:app         -> data-access, domain, contracts, util, testing
 *   type:data-access -> domain, contracts, util
 *   type:domain      -> contracts, util
 *   type:util        -> util, contracts
 *   type:contracts   -> nothing
 *   type:testing     -> util, contracts (only imported from tests)
 * Circular imports between projects are reported by the same rule; cycles
 * inside a project are checked by `npm run lint:cycles` (madge).
 */
export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  ...nx.configs['flat/javascript'],
  {
    ignores: ['**/dist', '**/out-tsc', '**/node_modules', 'apps/console/public/**', 'bench/results/**'],
  },
  {
    files: ['**/*.ts', '**/*.js'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: true,
          banTransitiveDependencies: true,
          allow: ['^.*/eslint(\\.base)?\\.config\\.[cm]?[jt]s$'],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:data-access', 'type:domain', 'type:contracts', 'type:util', 'type:testing'] },
            { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:util', 'type:testing'] },
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:contracts', 'type:util'] },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:contracts'] },
            { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:util', 'type:contracts'] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
];
