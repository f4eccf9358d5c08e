/**
 * `npm run test:statements`: the audit of every statement a suite run sent (test/audit), read
 * back from pg_stat_statements after `.ci/run`'s other passes; it has nothing to read on its own.
 */
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/audit/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  maxWorkers: 1,
};
