/**
 * The client library (sdk/) against a scripted fetch: what it sends on each attempt, how often it
 * tries, how long it waits, and what it throws. The real service is test/sdk.test.ts's.
 */
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  AuthenticationError,
  DonorGift,
  DonorGiftError,
  IdempotencyError,
  InvalidRequestError,
  RateLimitError,
  type FetchInit,
  type FetchResponseLike,
} from '../../sdk/src/index.js';
import { isRetryable, retryDelayMs } from '../../sdk/src/core.js';
import { errorFromAnswer } from '../../sdk/src/errors.js';

interface Sent {
  url: string;
  init: FetchInit;
}

type Step = { status: number; body?: unknown; headers?: Record<string, string> } | { drop: true };

/** A fetch that answers each call with the next step, and records what each call sent. */
function scripted(...steps: Step[]) {
  const sent: Sent[] = [];
  const waits: number[] = [];
  const fetch = async (url: string, init: FetchInit): Promise<FetchResponseLike> => {
    sent.push({ url, init });
    const step = steps.shift();
    if (!step) throw new Error('the script has no more answers');
    if ('drop' in step)
      throw new TypeError('fetch failed', { cause: new Error('other side closed') });
    const text =
      step.body === undefined
        ? ''
        : typeof step.body === 'string'
          ? step.body
          : JSON.stringify(step.body);
    return {
      status: step.status,
      headers: new Headers({
        'Request-Id': `req_${'0'.repeat(23)}${sent.length}`,
        ...step.headers,
      }),
      text: async () => text,
    };
  };
  const client = (options: { maxRetries?: number } = {}) =>
    new DonorGift({
      apiKey: 'dgs_key_test',
      baseUrl: 'http://api.test:3000',
      fetch,
      sleep: async (ms) => {
        waits.push(ms);
      },
      ...options,
    });
  return { sent, waits, client };
}

const envelope = (type: string, code: string, extra: Record<string, unknown> = {}) => ({
  error: {
    type,
    code,
    message: `${code} happened`,
    request_id: 'req_0123456789abcdef01234567',
    ...extra,
  },
});

const gift = { id: 7, object: 'gift', amount: 25 };
const giftBody = { donor_id: 1, amount: 25, subject: 'Gift', gift_date: '2026-01-01' };

describe('retries', () => {
  test('a 503 then a 201: two attempts with the same Idempotency-Key and the same bytes', async () => {
    const { sent, waits, client } = scripted(
      {
        status: 503,
        body: envelope('api_error', 'service_unavailable'),
        headers: { 'Retry-After': '2', 'Should-Retry': 'true' },
      },
      { status: 201, body: gift, headers: { 'Idempotent-Replayed': 'true' } },
    );
    const created = await client().gifts.create(giftBody);
    expect(created).toEqual(gift);
    expect(created.lastResponse).toEqual({
      requestId: `req_${'0'.repeat(23)}2`,
      status: 201,
      idempotentReplayed: true,
    });
    expect(JSON.stringify(created)).toBe(JSON.stringify(gift));
    expect(sent).toHaveLength(2);
    expect(waits).toEqual([2000]);
    const [first, second] = sent.map(({ url, init }) => ({ url, ...init, signal: undefined }));
    expect(first).toEqual(second);
    expect(first!.url).toBe('http://api.test:3000/api/v1/gifts');
    expect(first!.headers['Idempotency-Key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(first!.body).toBe(JSON.stringify(giftBody));
  });

  test("the caller's key is sent on every attempt; a dry run says so in Dry-Run", async () => {
    const { sent, client } = scripted({ status: 502 }, { status: 201, body: { ...gift, id: 0 } });
    await client().gifts.create(giftBody, { idempotencyKey: 'gift-1', dryRun: true });
    expect(sent.map(({ init }) => init.headers['Idempotency-Key'])).toEqual(['gift-1', 'gift-1']);
    expect(sent.map(({ init }) => init.headers['Dry-Run'])).toEqual(['true', 'true']);
  });

  test('a 429 waits exactly its Retry-After, then succeeds', async () => {
    const { sent, waits, client } = scripted(
      {
        status: 429,
        body: envelope('rate_limit_error', 'rate_limited'),
        headers: { 'Retry-After': '3' },
      },
      { status: 200, body: gift },
    );
    await expect(client().gifts.retrieve(7)).resolves.toEqual(gift);
    expect(waits).toEqual([3000]);
    expect(sent).toHaveLength(2);
  });

  test('a 429 still limited after the retries is a RateLimitError with retryAfter', async () => {
    const limited = {
      status: 429,
      body: envelope('rate_limit_error', 'rate_limited'),
      headers: { 'Retry-After': '1' },
    };
    const { sent, client } = scripted(limited, limited, limited);
    const error = await client()
      .gifts.retrieve(7)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toBeInstanceOf(DonorGiftError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 1 });
    expect(sent).toHaveLength(3);
  });

  test('a 422 is never retried, whatever maxRetries says', async () => {
    const { sent, client } = scripted({
      status: 422,
      body: envelope('invalid_request_error', 'validation_failed', {
        param: 'amount',
        errors: [{ param: 'amount', code: 'required', message: 'is required' }],
      }),
      headers: { 'Should-Retry': 'false' },
    });
    const error = await client({ maxRetries: 5 })
      .gifts.create(giftBody)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({
      status: 422,
      type: 'invalid_request_error',
      code: 'validation_failed',
      param: 'amount',
      errors: [{ param: 'amount', code: 'required', message: 'is required' }],
      requestId: 'req_0123456789abcdef01234567',
      shouldRetry: false,
    });
    expect(sent).toHaveLength(1);
  });

  test('maxRetries: 0 is one attempt', async () => {
    const { sent, client } = scripted({ status: 503 }, { status: 201, body: gift });
    await expect(client({ maxRetries: 0 }).gifts.create(giftBody)).rejects.toBeInstanceOf(APIError);
    expect(sent).toHaveLength(1);
  });

  test('an empty-body 502 is still a typed error, with the status and the Request-Id', async () => {
    const { client } = scripted({ status: 502 }, { status: 502 }, { status: 502 });
    const error = await client()
      .gifts.retrieve(7)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({
      status: 502,
      type: 'api_error',
      code: null,
      requestId: `req_${'0'.repeat(23)}3`,
    });
    expect((error as Error).name).toBe('APIError');
  });

  test('a dropped connection is retried with the same key, then replays', async () => {
    const { sent, client } = scripted(
      { drop: true },
      { status: 201, body: gift, headers: { 'Idempotent-Replayed': 'true' } },
    );
    const created = await client().gifts.create(giftBody);
    expect(created.lastResponse.idempotentReplayed).toBe(true);
    expect(new Set(sent.map(({ init }) => init.headers['Idempotency-Key'])).size).toBe(1);
  });

  test('no answer within timeoutMs is retried, then an APIConnectionTimeoutError', async () => {
    let attempts = 0;
    const silent = (_url: string, init: FetchInit) =>
      new Promise<FetchResponseLike>((_resolve, reject) => {
        attempts++;
        init.signal!.addEventListener('abort', () => reject(init.signal!.reason));
      });
    const client = new DonorGift({
      apiKey: 'k',
      baseUrl: 'http://h:1',
      fetch: silent,
      timeoutMs: 10,
      maxRetries: 1,
      sleep: async () => {},
    });
    await expect(client.gifts.retrieve(1)).rejects.toBeInstanceOf(APIConnectionTimeoutError);
    expect(attempts).toBe(2);
  });

  test('no answer at all after the retries is an APIConnectionError', async () => {
    const { sent, client } = scripted({ drop: true }, { drop: true }, { drop: true });
    await expect(client().gifts.list()).rejects.toBeInstanceOf(APIConnectionError);
    expect(sent).toHaveLength(3);
  });

  test('409 idempotency_key_in_flight is retried; another 409 is not', async () => {
    const inFlight = scripted(
      {
        status: 409,
        body: envelope('idempotency_error', 'idempotency_key_in_flight'),
        headers: { 'Should-Retry': 'true' },
      },
      { status: 201, body: gift },
    );
    await expect(inFlight.client().gifts.create(giftBody)).resolves.toEqual(gift);
    const locked = scripted({
      status: 409,
      body: envelope('invalid_request_error', 'gift_locked'),
    });
    await expect(locked.client().gifts.update(7, { amount: 3 })).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
    expect(locked.sent).toHaveLength(1);
  });

  test('the backoff doubles from 0.5 s to at most 8 s, jittered into [0.75, 1]; Retry-After over 60 s is not obeyed', () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => retryDelayMs(n, null, () => 1))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000,
    ]);
    expect(retryDelayMs(0, null, () => 0)).toBe(375);
    expect(retryDelayMs(0, 0, () => 1)).toBe(0);
    expect(retryDelayMs(0, 60, () => 1)).toBe(60_000);
    expect(retryDelayMs(1, 3600, () => 1)).toBe(1000);
  });

  test('which statuses are retried', () => {
    const retried = (status: number, headers: Record<string, string> = {}) =>
      isRetryable(errorFromAnswer({ status, headers: new Headers(headers), text: '' }));
    expect(
      [400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504].filter((s) => retried(s)),
    ).toEqual([429, 500, 502, 503, 504]);
    expect(retried(422, { 'Should-Retry': 'true' })).toBe(false);
    expect(retried(503, { 'Should-Retry': 'false' })).toBe(false);
  });
});

describe('errors', () => {
  test('each error type is an instance of its own class and of DonorGiftError', async () => {
    const { client } = scripted(
      { status: 401, body: envelope('authentication_error', 'invalid_api_key') },
      { status: 400, body: envelope('idempotency_error', 'invalid_idempotency_key') },
      {
        status: 404,
        body: envelope('invalid_request_error', 'resource_not_found', { param: 'id' }),
      },
    );
    const c = client();
    const auth = await c.gifts.retrieve(1).catch((e: unknown) => e);
    const key = await c.gifts.create(giftBody, { idempotencyKey: ' ' }).catch((e: unknown) => e);
    const missing = await c.gifts.retrieve(1).catch((e: unknown) => e);
    expect(auth).toBeInstanceOf(AuthenticationError);
    expect(key).toBeInstanceOf(IdempotencyError);
    expect(missing).toBeInstanceOf(InvalidRequestError);
    for (const error of [auth, key, missing]) {
      expect(error).toBeInstanceOf(DonorGiftError);
      expect(error).toBeInstanceOf(Error);
    }
  });
});

describe('paging', () => {
  test('for await follows next_cursor as starting_after, with the filters, until it is null', async () => {
    const { sent, client } = scripted(
      page([5, 4], 'c1'),
      page([3, 2], 'c2', 'p2'),
      page([1], null, 'p3'),
    );
    const ids: number[] = [];
    for await (const row of client().gifts.list({ donor_id: 9, limit: 2 })) ids.push(row.id);
    expect(ids).toEqual([5, 4, 3, 2, 1]);
    expect(sent.map(({ url }) => url.replace('http://api.test:3000/api/v1/gifts', ''))).toEqual([
      '?donor_id=9&limit=2',
      '?donor_id=9&limit=2&starting_after=c1',
      '?donor_id=9&limit=2&starting_after=c2',
    ]);
  });

  test('the promise is the first page; toArray stops at max', async () => {
    const { sent, client } = scripted(page([5, 4], 'c1'), page([3, 2], 'c2'));
    const list = client().gifts.list({ limit: 2 });
    const first = await list;
    expect(first.data.map((row) => row.id)).toEqual([5, 4]);
    expect(first.lastResponse.status).toBe(200);
    expect((await list.toArray({ max: 3 })).map((row) => row.id)).toEqual([5, 4, 3]);
    expect(sent).toHaveLength(2);
  });
});

describe('bad input', () => {
  test('a client without apiKey or baseUrl, or with a baseUrl that is no URL, throws at construction', () => {
    const make = (options: Record<string, unknown>) => () =>
      new DonorGift(options as unknown as ConstructorParameters<typeof DonorGift>[0]);
    expect(make({ baseUrl: 'http://localhost:3000' })).toThrow(/apiKey is required/);
    expect(make({ apiKey: 'dgs_key_x' })).toThrow(/baseUrl is required/);
    expect(make({ apiKey: 'dgs_key_x', baseUrl: 'localhost' })).toThrow(/not a URL/);
    expect(make({ apiKey: 'dgs_key_x', baseUrl: 'http://h', maxRetries: -1 })).toThrow(RangeError);
  });

  test('a baseUrl ending in /api/v1 is not repeated', async () => {
    const { sent } = scripted();
    const fetch = async (url: string, init: FetchInit) => {
      sent.push({ url, init });
      return { status: 200, headers: new Headers(), text: async () => JSON.stringify(gift) };
    };
    await new DonorGift({ apiKey: 'k', baseUrl: 'http://h:1/api/v1/', fetch }).gifts.retrieve(7);
    expect(sent[0]!.url).toBe('http://h:1/api/v1/gifts/7');
  });

  test('toArray with max over 10,000 throws', () => {
    const { client } = scripted(page([], null));
    const list = client().gifts.list();
    expect(() => list.toArray({ max: 10_001 })).toThrow(RangeError);
    return list;
  });

  test('a body that cannot be serialised throws before anything is sent', () => {
    const { sent, client } = scripted();
    const circular: Record<string, unknown> = { ...giftBody };
    circular.self = circular;
    expect(() => client().gifts.create(circular as unknown as typeof giftBody)).toThrow(
      /cannot be serialised/,
    );
    expect(() =>
      client().gifts.create({ ...giftBody, amount: 10n } as unknown as typeof giftBody),
    ).toThrow(TypeError);
    expect(sent).toHaveLength(0);
  });
});

function page(ids: number[], next: string | null, previous: string | null = null) {
  return {
    status: 200,
    body: {
      object: 'list',
      url: '/api/v1/gifts',
      has_more: next !== null,
      next_cursor: next,
      previous_cursor: previous,
      data: ids.map((id) => ({ ...gift, id })),
    },
  };
}
