/** Integration tests run against real PostgreSQL, Redis and BullMQ workers (see test/helpers). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // The serial suite (fault injection, the README's blocks) has its own command:
  // npm run test:faults, jest.faults.config.js; the audit of a whole run's statements, npm run
  // test:statements (jest.audit.config.js).
  testPathIgnorePatterns: [
    '/node_modules/',
    '<rootDir>/test/faults/',
    '<rootDir>/test/readme/',
    '<rootDir>/test/audit/',
  ],
  globalSetup: '<rootDir>/test/helpers/globalSetup.js',
  globalTeardown: '<rootDir>/test/helpers/globalTeardown.js',
  testTimeout: 60000,
  maxWorkers: 2,
};
