/**
 * `npm run test:faults`: the fault-injection suite (test/faults). Each file runs the API and the
 * workers as real processes and breaks something under load, so files run one at a time.
 */
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 120_000,
  maxWorkers: 1,
};
