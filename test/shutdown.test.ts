// SIGTERM or SIGINT (Ctrl+C) stops the API and the worker in under 10 s whatever is down.
import { configEnv, RedisServer, startEntry, type ServiceProcess } from './helpers/processes.js';
import { startTestService, type TestService } from './helpers/harness.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

async function timeToExit(proc: ServiceProcess, signal: NodeJS.Signals): Promise<number> {
  const started = Date.now();
  proc.child.kill(signal);
  await Promise.race([proc.exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
  return Date.now() - started;
}

describe.each([
  ['killed', (redis: RedisServer) => redis.kill()],
  ['frozen', async (redis: RedisServer) => redis.pause()],
])('with Redis %s', (_state, breakRedis) => {
  test.each([
    ['api/main.js', 'SIGTERM'],
    ['api/main.js', 'SIGINT'],
    ['worker/main.js', 'SIGTERM'],
    ['worker/main.js', 'SIGINT'],
  ] as const)(
    '%s stops on %s in under 10 s',
    async (entry, signal) => {
      const redis = await RedisServer.start();
      try {
        const proc = await startEntry(entry, {
          ...configEnv(service.config),
          REDIS_URL: redis.url,
        });
        await breakRedis(redis);
        expect(await timeToExit(proc, signal)).toBeLessThan(10_000);
      } finally {
        await redis.stop();
      }
    },
    30_000,
  );
});
