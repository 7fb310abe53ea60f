/**
 * End-to-end tier: the composed stack (docker-compose.yml) started once by the
 * global setup under project `stageflow-e2e`, driven over REST and the
 * WebSocket like a user would, and removed by the global teardown.
 *
 * To run against a stack that is already up, export STAGEFLOW_E2E_URL (and
 * STAGEFLOW_E2E_TOKEN); STAGEFLOW_E2E_KEEP=1 leaves the started stack running.
 * See tests/README.md.
 */
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('../tsconfig.base.json');

module.exports = {
  displayName: 'e2e',
  testEnvironment: 'node',
  rootDir: '..',
  roots: ['<rootDir>/tests/e2e'],
  testMatch: ['**/*.e2e-spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tests/tsconfig.json' }],
  },
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  globalSetup: '<rootDir>/tests/e2e/support/stack.global-setup.ts',
  globalTeardown: '<rootDir>/tests/e2e/support/stack.global-teardown.ts',
  testTimeout: 120000,
  maxWorkers: 1,
  // CI logs then say which user-visible behaviour passed or failed.
  verbose: true,
};
