module.exports = {
  displayName: 'live-view',
  preset: '../../jest.preset.js',
  testEnvironment: 'node',
  passWithNoTests: true,
  // Unit tier only: integration tests (*.int-spec.ts) run from jest.int.config.cts.
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'html'],
  coverageDirectory: '../../coverage/libs/live-view',
};
