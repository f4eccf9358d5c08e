import { insertApiKey } from '../common/institutions.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { sleep } from './helpers/wait.js';

type Body = Record<string, unknown> & {
  id: number;
  error?: { type: string; code: string; message: string; request_id: string };
};

const LIMIT = 5;

describe('per-key rate limit', () => {
  let service: TestService;
  let fundId: number;
  beforeAll(async () => {
    service = await startTestService({ RATE_LIMIT_PER_SECOND: String(LIMIT) });
    fundId = (
      await service.call<Body>('POST', '/api/v1/funds', {
        body: { name: 'Library Fund', code: 'LIB' },
        headers: { 'Idempotency-Key': 'fund' },
      })
    ).body.id;
  });
  afterAll(async () => {
    await service?.close();
  });
  /** Starts from a key's fresh second: waits out whatever the previous test used. */
  beforeEach(() => sleep(1_100));

  const list = (key?: string) => service.call<Body>('GET', '/api/v1/funds', key ? { key } : {});

  test(`the ${LIMIT + 1}th request within a second is 429 rate_limited with Retry-After, in the error envelope`, async () => {
    const answers = await Promise.all(Array.from({ length: LIMIT + 1 }, () => list()));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(200), 429]);
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(refused.body.error).toMatchObject({
      type: 'rate_limit_error',
      code: 'rate_limited',
      request_id: refused.headers.get('request-id'),
    });
    expect(refused.body.error?.message).toMatch(/Retry after 1 s/);
    expect(refused.headers.get('retry-after')).toBe('1');

    await sleep(1_000);
    expect((await list()).status).toBe(200);
  });

  test('a write refused by the limit does nothing, and its key is free for the retry', async () => {
    const limited = await Promise.all(Array.from({ length: LIMIT }, () => list()));
    expect(limited.every((answer) => answer.status === 200)).toBe(true);
    const post = () =>
      service.call<Body>('POST', '/api/v1/funds', {
        body: { name: 'Rate Limited Fund', code: 'RLF' },
        headers: { 'Idempotency-Key': 'limited-write' },
      });
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(await service.count('funds')).toBe(1);

    await sleep(Number(refused.headers.get('retry-after')) * 1_000);
    const retried = await post();
    // With its body, so that any other answer says why.
    expect({ status: retried.status, body: retried.body }).toMatchObject({ status: 201 });
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await service.count('funds')).toBe(2);
  });

  test('dry runs count like any request', async () => {
    const dryRuns = await Promise.all(
      Array.from({ length: LIMIT + 1 }, () =>
        service.call<Body>('PATCH', `/api/v1/funds/${fundId}?dry_run=true`, {
          body: { name: 'Renamed' },
        }),
      ),
    );
    expect(dryRuns.map((answer) => answer.status).sort()).toEqual([
      ...Array<number>(LIMIT).fill(200),
      429,
    ]);
  });

  test('each API key has a limit of its own, even within one institution', async () => {
    const second = await insertApiKey(service.db, service.tenant.institutionId);
    const first = await Promise.all(Array.from({ length: LIMIT + 1 }, () => list()));
    expect(first.filter((answer) => answer.status === 429)).toHaveLength(1);
    const other = await Promise.all(Array.from({ length: LIMIT }, () => list(second.key)));
    expect(other.map((answer) => answer.status)).toEqual(Array<number>(LIMIT).fill(200));
  });

  test('an unauthenticated request is 401, not counted against anyone', async () => {
    const anonymous = await Promise.all(
      Array.from({ length: LIMIT + 1 }, () =>
        service.call<Body>('GET', '/api/v1/funds', { key: 'dgs_key_0000000000000000_nope' }),
      ),
    );
    expect(anonymous.every((answer) => answer.status === 401)).toBe(true);
    const own = await Promise.all(Array.from({ length: LIMIT }, () => list()));
    expect(own.every((answer) => answer.status === 200)).toBe(true);
  });
});

describe('RATE_LIMIT_PER_SECOND=0', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ RATE_LIMIT_PER_SECOND: '0' });
  });
  afterAll(async () => {
    await service?.close();
  });

  test('turns the limit off', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => service.call<Body>('GET', '/api/v1/funds')),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
  });
});
