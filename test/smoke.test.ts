import { EVENT_STREAM_MAX_LENGTH, writeQueueLocationFor } from '../common/queue.js';
import { startTestService, type TestService } from './helpers/harness.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

test('creates a donor through the queue', async () => {
  const response = await service.call('POST', '/api/v1/donors', {
    body: {
      role: 'Individual',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.org',
    },
  });
  expect(response.status).toBe(201);
  expect(await service.count('donors')).toBe(1);
});

test('the queue keeps enough events for an API process that falls behind to find its outcomes', async () => {
  const { QUEUE_PREFIX, WRITE_QUEUE_SHARDS } = service.config;
  const writes = writeQueueLocationFor(
    QUEUE_PREFIX,
    WRITE_QUEUE_SHARDS,
    service.tenant.institutionId,
  );
  const meta = `${writes.prefix}:${writes.name}:meta`;
  expect(await service.redis.hget(meta, 'opts.maxLenEvents')).toBe(String(EVENT_STREAM_MAX_LENGTH));
});
