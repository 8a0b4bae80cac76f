// Benchmarks (test/bench): `npm run bench`. Never part of `npm test`.
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/bench/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 600000,
  maxWorkers: 1,
};
