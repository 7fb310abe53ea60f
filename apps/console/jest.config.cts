module.exports = {
  displayName: 'console',
  preset: '../../jest.preset.js',
  // The unit tests cover the console's pure parts (routes, reducers, geometry, input mapping): no DOM needed.
  testEnvironment: 'node',
  passWithNoTests: true,
  // Unit tier only: the browser test (*.int-spec.ts) runs from jest.int.config.cts.
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'html'],
  coverageDirectory: '../../coverage/apps/console',
};
