// Jest: ts-jest transpiles each file on its own (isolatedModules, no type
// check: `npm run lint` and `npx tsc -p tsconfig.test.json` do that), so a
// run spends its time in the tests. test/bench and test/soak are never part of `npm test`.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/bench/', '<rootDir>/test/soak/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 60000,
  // Real processes (redis-server, node) are stopped in afterAll and killed on
  // exit; .ci/run adds --forceExit so a leaked handle cannot stall CI.
  // The summary repeats every failure at the end, however few files ran;
  // test/summary-reporter.js keeps running counts for .ci/run (when
  // ZD_TEST_SUMMARY_FILE is set; it does nothing otherwise).
  reporters: [['default', { summaryThreshold: 0 }], 'github-actions', '<rootDir>/test/summary-reporter.js'],
};
