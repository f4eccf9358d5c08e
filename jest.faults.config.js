/**
 * `npm run test:faults`: the serial suite. The fault-injection files (test/faults) run the API and
 * the workers as real processes and break something under load; test/readme runs the README's
 * blocks, which rebuild dist. So files run one at a time, apart from `npm test`.
 */
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/faults/**/*.test.ts', '<rootDir>/test/readme/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 120_000,
  maxWorkers: 1,
};
