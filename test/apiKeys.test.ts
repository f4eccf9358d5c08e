import { sql } from 'slonik';
import { z } from 'zod';
import { keyWith } from './helpers/apiKeys.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { waitFor } from './helpers/wait.js';

interface ApiKeyBody {
  id: string;
  object: string;
  name: string;
  prefix: string;
  permissions: Record<string, string>;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
  rolled_from_id: string | null;
  key?: string;
}

interface ErrorBody {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    errors?: { param: string; code: string }[];
  };
}

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

const keyCount = () => service.count('api_keys');

const eventsOf = (type: string) =>
  service.db.any(sql.type(
    z.object({ data: z.record(z.string(), z.unknown()), api_key_id: z.string() }),
  )`
    SELECT data, api_key_id FROM events WHERE type = ${type} ORDER BY seq`);

const create = (
  body: unknown,
  options: { key?: string; headers?: Record<string, string>; query?: string } = {},
) =>
  service.call<ApiKeyBody & ErrorBody>('POST', `/api/v1/api-keys${options.query ?? ''}`, {
    body,
    ...(options.key ? { key: options.key } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });

describe('POST /api-keys', () => {
  test('makes a key that shows its secret once and grants only what it has', async () => {
    const headers = { 'Idempotency-Key': 'warehouse-key' };
    const body = { name: 'Data warehouse', permissions: { '*': 'read', scholarships: 'none' } };
    const made = await create(body, { headers });
    expect(made.status).toBe(201);
    const { key, ...record } = made.body;
    expect(key).toMatch(/^dgs_key_[0-9a-f]{16}_/);
    expect(record).toEqual({
      id: key!.split('_').slice(1, 3).join('_'),
      object: 'api_key',
      name: 'Data warehouse',
      prefix: key!.slice(0, 12),
      permissions: { '*': 'read', scholarships: 'none' },
      expires_at: null,
      last_used_at: null,
      created_at: expect.any(String),
      revoked_at: null,
      rolled_from_id: null,
    });
    expect(made.headers.get('Location')).toBe(`/api/v1/api-keys/${record.id}`);

    // A replay answers the same secret; nothing new is made.
    const before = await keyCount();
    const replay = await create(body, { headers });
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.body.key).toBe(key);
    expect(await keyCount()).toBe(before);

    // GET and the list never show the secret; the event carries the key without it.
    const got = await service.call<ApiKeyBody>('GET', `/api/v1/api-keys/${record.id}`);
    expect(got.body).toEqual(record);
    const list = await service.call<{ data: ApiKeyBody[] }>('GET', '/api/v1/api-keys?limit=100');
    expect(list.body.data.map((entry) => entry.id)).toContain(record.id);
    expect(JSON.stringify(list.body)).not.toContain(key!.slice(25));
    const [event] = await eventsOf('api_key.created');
    expect(event!.data).toEqual(record);
    expect(event!.api_key_id).toBe(service.tenant.apiKeyId);

    // The new key reads, and is refused every write and what it was not given.
    expect((await service.call('GET', '/api/v1/donors', { key: key! })).status).toBe(200);
    expect((await service.call('GET', '/api/v1/students', { key: key! })).status).toBe(403);
    const write = await service.call<ErrorBody>('POST', '/api/v1/tags', {
      key: key!,
      body: { name: 'x' },
    });
    expect(write.status).toBe(403);
  });

  test('a dry run answers a placeholder and makes nothing', async () => {
    const before = await keyCount();
    const dry = await create(
      { name: 'Trial', permissions: { gifts: 'write' } },
      { query: '?dry_run=true' },
    );
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe('key_0000000000000000');
    expect(await keyCount()).toBe(before);
  });

  test('bad input is 422 with every problem, and makes nothing', async () => {
    const limited = await keyWith(service.db, service.tenant.institutionId, {
      api_keys: 'write',
      gifts: 'read',
    });
    const before = await keyCount();
    const tooFar = new Date(Date.now() + 367 * 86_400_000).toISOString();
    const cases: [unknown, string | undefined, { param: string; code: string }[]][] = [
      [{ permissions: { '*': 'read' } }, undefined, [{ param: 'name', code: 'required' }]],
      [
        { name: 'x', permissions: { owners: 'read' } },
        undefined,
        [{ param: 'permissions.owners', code: 'unknown_field' }],
      ],
      [
        { name: 'x', permissions: { gifts: 'admin' } },
        undefined,
        [{ param: 'permissions.gifts', code: 'invalid_value' }],
      ],
      [
        { name: 'x', permissions: { gifts: 'read' }, expires_at: '2020-01-01T00:00:00Z' },
        undefined,
        [{ param: 'expires_at', code: 'out_of_range' }],
      ],
      [
        { name: 'x', permissions: { gifts: 'read' }, expires_at: tooFar },
        undefined,
        [{ param: 'expires_at', code: 'out_of_range' }],
      ],
      [
        { name: 'x', permissions: { gifts: 'write' } },
        limited.key,
        [{ param: 'permissions', code: 'not_allowed' }],
      ],
      [
        { name: 'x', permissions: { '*': 'read' } },
        limited.key,
        [{ param: 'permissions', code: 'not_allowed' }],
      ],
    ];
    for (const [body, key, expected] of cases) {
      for (const query of ['', '?dry_run=true']) {
        const refused = await create(body, { ...(key ? { key } : {}), query });
        expect([JSON.stringify(body), refused.status]).toEqual([JSON.stringify(body), 422]);
        expect(refused.body.error.errors?.map(({ param, code }) => ({ param, code }))).toEqual(
          expected,
        );
      }
    }
    // Within its own permissions a limited key may make a key.
    const narrower = await create(
      { name: 'Gift reader', permissions: { gifts: 'read' } },
      { key: limited.key },
    );
    expect(narrower.status).toBe(201);
    expect(await keyCount()).toBe(before + 1);
  });
});

describe('roll and revoke', () => {
  test('a roll makes a new key of the same name and permissions; the old one expires after the grace', async () => {
    const old = await keyWith(service.db, service.tenant.institutionId, { '*': 'read' });
    const rolled = await service.call<ApiKeyBody>('POST', `/api/v1/api-keys/${old.id}/roll`, {
      body: { expires_in_seconds: 3600 },
    });
    expect(rolled.status).toBe(201);
    expect(rolled.body).toMatchObject({
      name: 'Test key',
      permissions: { '*': 'read' },
      rolled_from_id: old.id,
      expires_at: null,
    });
    const before = await service.call<ApiKeyBody>('GET', `/api/v1/api-keys/${old.id}`);
    const grace = Date.parse(before.body.expires_at!) - Date.now();
    expect(grace).toBeGreaterThan(3_500_000);
    expect(grace).toBeLessThanOrEqual(3_600_000);
    expect((await service.call('GET', '/api/v1/gifts', { key: old.key })).status).toBe(200);
    expect((await service.call('GET', '/api/v1/gifts', { key: rolled.body.key! })).status).toBe(
      200,
    );

    // Rolled again with no grace, it stops at once, with the one hint an integration needs.
    const now = await service.call('POST', `/api/v1/api-keys/${old.id}/roll`, {
      body: { expires_in_seconds: 0 },
    });
    expect(now.status).toBe(201);
    await waitFor(
      async () => (await service.call('GET', '/api/v1/gifts', { key: old.key })).status === 401,
      5_000,
      'the rolled key to expire',
    );
    const expired = await service.call<ErrorBody>('GET', '/api/v1/gifts', { key: old.key });
    expect(expired.body.error.code).toBe('api_key_expired');
    const again = await service.call<ErrorBody>('POST', `/api/v1/api-keys/${old.id}/roll`, {
      body: {},
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('invalid_state_transition');
    const [event] = await eventsOf('api_key.rolled');
    expect(event!.data).toMatchObject({ rolled_from_id: expect.any(String) });
    expect(event!.data).not.toHaveProperty('key');
  });

  test('a key rolls only keys whose permissions it has; out-of-range grace is 422', async () => {
    const limited = await keyWith(service.db, service.tenant.institutionId, { api_keys: 'write' });
    const wide = await keyWith(service.db, service.tenant.institutionId, { '*': 'write' });
    const refused = await service.call<ErrorBody>('POST', `/api/v1/api-keys/${wide.id}/roll`, {
      key: limited.key,
      body: {},
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.errors).toEqual([
      expect.objectContaining({ param: 'id', code: 'not_allowed' }),
    ]);
    const range = await service.call<ErrorBody>('POST', `/api/v1/api-keys/${wide.id}/roll`, {
      body: { expires_in_seconds: 604_801 },
    });
    expect(range.body.error.errors).toEqual([
      expect.objectContaining({ param: 'expires_in_seconds', code: 'out_of_range' }),
    ]);
  });

  test('revoking a key stops it; a key cannot revoke itself; another institution’s key is 404', async () => {
    const victim = await keyWith(service.db, service.tenant.institutionId, { '*': 'read' });
    const revoked = await service.call<ApiKeyBody>('DELETE', `/api/v1/api-keys/${victim.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    await waitFor(
      async () => (await service.call('GET', '/api/v1/gifts', { key: victim.key })).status === 401,
      5_000,
      'the revoked key to be refused',
    );
    const self = await service.call<ErrorBody>(
      'DELETE',
      `/api/v1/api-keys/${service.tenant.apiKeyId}`,
    );
    expect(self.status).toBe(422);
    expect(self.body.error.errors).toEqual([
      expect.objectContaining({ param: 'id', code: 'not_allowed' }),
    ]);
    const other = await service.createTenant('Other University');
    for (const id of [other.apiKeyId, 'key_0123456789abcdef', 'nonsense']) {
      expect((await service.call('DELETE', `/api/v1/api-keys/${id}`)).status).toBe(404);
      expect((await service.call('GET', `/api/v1/api-keys/${id}`)).status).toBe(404);
      expect((await service.call('POST', `/api/v1/api-keys/${id}/roll`, { body: {} })).status).toBe(
        404,
      );
    }
    expect((await service.call('GET', '/api/v1/institution', { key: other.key })).status).toBe(200);
  });

  test('last_used_at shows the minute of the last use, within seconds', async () => {
    const used = await keyWith(service.db, service.tenant.institutionId, { '*': 'read' });
    expect((await service.call('GET', '/api/v1/gifts', { key: used.key })).status).toBe(200);
    await waitFor(
      async () =>
        (await service.call<ApiKeyBody>('GET', `/api/v1/api-keys/${used.id}`)).body.last_used_at !==
        null,
      5_000,
      'last_used_at to be written',
    );
    const got = await service.call<ApiKeyBody>('GET', `/api/v1/api-keys/${used.id}`);
    expect(got.body.last_used_at).toMatch(/:00\.000Z$/);
    expect(Date.now() - Date.parse(got.body.last_used_at!)).toBeLessThan(120_000);
  });
});
