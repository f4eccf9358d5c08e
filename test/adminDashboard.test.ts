/**
 * The operators' queue dashboard (Bull Board) at /admin/queues: absent unless ADMIN_TOKEN is
 * configured, and then only for callers presenting that token (HTTP Basic password or Bearer).
 */
import { loadConfig } from '../common/config.js';
import { shardOf } from '../common/queueShards.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { waitFor } from './helpers/wait.js';

const TOKEN = 'operator-token-for-the-tests-0123';

let plain: TestService;
let guarded: TestService;
beforeAll(async () => {
  [plain, guarded] = await Promise.all([
    startTestService(),
    startTestService({ ADMIN_TOKEN: TOKEN }),
  ]);
});
afterAll(async () => {
  await Promise.all([plain?.close(), guarded?.close()]);
});

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

interface ErrorEnvelope {
  error: { type: string; code: string; message: string; request_id: string };
}

async function get(service: TestService, path: string, authorization?: string) {
  const response = await fetch(`${service.url}${path}`, {
    headers: authorization ? { Authorization: authorization } : {},
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text };
}

describe('without ADMIN_TOKEN', () => {
  test.each(['/admin/queues', '/admin/queues/api/queues'])(
    'GET %s is 404 route_not_found, even with a token',
    async (path) => {
      const response = await get(plain, path, `Bearer ${TOKEN}`);
      expect(response.status).toBe(404);
      expect((JSON.parse(response.text) as ErrorEnvelope).error.code).toBe('route_not_found');
    },
  );
});

describe('with ADMIN_TOKEN', () => {
  test.each([
    ['no credentials', undefined],
    ['a wrong Bearer token', `Bearer ${TOKEN}x`],
    ['a tenant API key as Bearer token', 'Bearer dgs_key_not_an_operator_token'],
    ['a wrong Basic password', basic('admin', 'not-the-operator-token')],
    ['the token as Basic user name, not password', basic(TOKEN, '')],
    ['an empty Bearer', 'Bearer '],
    ['an unknown scheme', `Token ${TOKEN}`],
  ])('%s: 401 with a Basic challenge and the error envelope', async (_name, authorization) => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      const response = await get(guarded, path, authorization);
      expect({ path, status: response.status }).toEqual({ path, status: 401 });
      expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm="/);
      const body = JSON.parse(response.text) as ErrorEnvelope;
      expect(body.error).toMatchObject({
        type: 'authentication_error',
        code: 'invalid_admin_token',
      });
      expect(body.error.request_id).toBe(response.headers.get('request-id'));
      expect(response.text).not.toContain(TOKEN);
    }
  });

  test('a tenant API key does not open the dashboard', async () => {
    const response = await fetch(`${guarded.url}/admin/queues`, {
      headers: { 'X-Service-API-Key': guarded.tenant.key },
    });
    expect(response.status).toBe(401);
  });

  test.each([
    ['Bearer', `Bearer ${TOKEN}`],
    ['HTTP Basic (any user name)', basic('operator', TOKEN)],
  ])('the token as %s opens the dashboard page and its assets', async (_name, authorization) => {
    const page = await get(guarded, '/admin/queues', authorization);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const base = /<base href="([^"]+)"/.exec(page.text)?.[1];
    expect(base).toBe('/admin/queues/');
    const assets = [...page.text.matchAll(/(?:src|href)="(static\/[^"]+)"/g)].map(
      (match) => `${base}${match[1]}`,
    );
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect({ asset, status: (await get(guarded, asset, authorization)).status }).toEqual({
        asset,
        status: 200,
      });
      expect({ asset, status: (await get(guarded, asset)).status }).toEqual({ asset, status: 401 });
    }
  });

  test('the dashboard shows the write queue, with the jobs the worker finished, and the webhooks and imports queues, read-only', async () => {
    const created = await guarded.call('POST', '/api/v1/funds', {
      body: { name: 'Library Fund', code: 'LIB-DASH' },
    });
    expect(created.status).toBe(201);

    const response = await get(
      guarded,
      '/admin/queues/api/queues?activeQueue=writes&status=completed&page=1',
      `Bearer ${TOKEN}`,
    );
    expect(response.status).toBe(200);
    const body = JSON.parse(response.text) as {
      queues: {
        name: string;
        readOnlyMode: boolean;
        counts: Record<string, number>;
        jobs: { data: { command?: string } }[];
      }[];
    };
    expect(body.queues.map((queue) => queue.name)).toEqual(['writes', 'webhooks', 'imports']);
    const [writes, webhooks, imports] = body.queues;
    expect(webhooks!.readOnlyMode).toBe(true);
    expect(imports!.readOnlyMode).toBe(true);
    expect(writes!.readOnlyMode).toBe(true);
    expect(writes!.counts.completed).toBeGreaterThanOrEqual(1);
    expect(writes!.jobs.length).toBeGreaterThanOrEqual(1);
  });

  test('read-only: pausing the queue from the dashboard is refused and the queue keeps working', async () => {
    const response = await fetch(`${guarded.url}/admin/queues/api/queues/writes/pause`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    const created = await guarded.call('POST', '/api/v1/funds', {
      body: { name: 'Arts Fund', code: 'ARTS-DASH' },
    });
    expect(created.status).toBe(201);
  });
});

describe('with WRITE_QUEUE_SHARDS=3', () => {
  let sharded: TestService;
  beforeAll(async () => {
    sharded = await startTestService({ ADMIN_TOKEN: TOKEN, WRITE_QUEUE_SHARDS: '3' });
  });
  afterAll(async () => {
    await sharded?.close();
  });

  test('the dashboard shows one queue per shard, and a write lands in its institution’s', async () => {
    const created = await sharded.call('POST', '/api/v1/funds', {
      body: { name: 'Shard Fund', code: 'SHARD-DASH' },
    });
    expect(created.status).toBe(201);
    type Board = {
      queues: { name: string; readOnlyMode: boolean; counts: Record<string, number> }[];
    };
    const board = async () => {
      const response = await get(sharded, '/admin/queues/api/queues', `Bearer ${TOKEN}`);
      expect(response.status).toBe(200);
      return JSON.parse(response.text) as Board;
    };
    const home = `writes-${shardOf(sharded.tenant.institutionId, 3)}`;
    // The worker answers before BullMQ marks the job completed.
    await waitFor(
      async () =>
        (await board()).queues.some(({ name, counts }) => name === home && counts.completed === 1),
      5_000,
      'the job completed on the dashboard',
    );
    const { queues } = await board();
    expect(queues.map(({ name }) => name).sort()).toEqual([
      'imports',
      'webhooks',
      'writes-0',
      'writes-1',
      'writes-2',
    ]);
    for (const queue of queues.filter(({ name }) => name.startsWith('writes'))) {
      expect(queue.readOnlyMode).toBe(true);
      expect(queue.counts.completed).toBe(queue.name === home ? 1 : 0);
    }
  });
});

describe('ADMIN_TOKEN configuration', () => {
  const base = {
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
    REDIS_URL: 'redis://127.0.0.1:6379',
    CURSOR_SECRET: 'x'.repeat(32),
  };

  test.each([
    ['unset', undefined, undefined],
    ['empty (as compose passes an unset variable)', '', undefined],
    ['16 characters', 'a'.repeat(16), 'a'.repeat(16)],
  ])('%s is accepted', (_name, value, expected) => {
    expect(loadConfig({ ...base, ADMIN_TOKEN: value }).ADMIN_TOKEN).toBe(expected);
  });

  test('a token shorter than 16 characters stops the start with a line naming the variable', () => {
    expect(() => loadConfig({ ...base, ADMIN_TOKEN: 'too-short' })).toThrow(
      'Invalid configuration: ADMIN_TOKEN must be at least 16 characters',
    );
  });
});
