/**
 * Tests of the processes themselves (start, shutdown, packaging of the service and of the client
 * library, the demo, the operator CLI's imports and webhooks), of the static document (its lint,
 * a client generated from it, its webhooks), of the browser pages and of the Redis Clusters
 * the tests start of their own (the write path's runs again on CI's cluster pass): they prove
 * nothing more when the service's connections go through PgBouncer, so CI's second pass
 * (.ci/run, TEST_ONCE=1) leaves them to the first. test/operatorCli.test.ts stays in it: its
 * `revoke-key` sends a statement the statement audit expects to see
 * (test/helpers/statementAudit.ts).
 */
const oncePerRun = [
  'shutdown',
  'startup',
  'demo',
  'demo.local',
  'install',
  'compose',
  'processes',
  'seed',
  'operatorCli.webhooks',
  'imports.cli',
  'openapi.lint',
  'openapi.clientTypes',
  'openapi.webhooks',
  'sdk.package',
  'docsPage',
  'browser',
  'adminDashboard.browser',
  'redisCluster',
  'redisClusterSecurity',
].map((name) => `<rootDir>/test/${name.replaceAll('.', '\\.')}\\.test\\.ts$`);

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
    ...(process.env.TEST_ONCE ? oncePerRun : []),
  ],
  globalSetup: '<rootDir>/test/helpers/globalSetup.js',
  globalTeardown: '<rootDir>/test/helpers/globalTeardown.js',
  testTimeout: 60000,
  maxWorkers: 2,
};
