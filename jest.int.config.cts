/**
 * Integration tier: every `*.int-spec.ts` in apps/ and libs/, against real
 * Redis started once by testcontainers in the global setup (its URL is passed
 * to the tests as STAGEFLOW_TEST_REDIS_URL). Tests isolate themselves with a
 * unique key prefix and queue name each.
 */
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.base.json');

module.exports = {
  displayName: 'integration',
  testEnvironment: 'node',
  rootDir: '.',
  roots: ['<rootDir>/apps', '<rootDir>/libs'],
  testMatch: ['**/*.int-spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.int.json' }],
  },
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  globalSetup: '<rootDir>/libs/testing/src/jest/redis.global-setup.ts',
  globalTeardown: '<rootDir>/libs/testing/src/jest/redis.global-teardown.ts',
  testTimeout: 120000,
  maxWorkers: 2,
};
