import { sql } from 'slonik';
import { routeTable } from '../api/routes.js';
import { checkRoutePermissions } from '../common/auth/permissions.js';
import { buildOpenApiDocument } from '../common/openapi/document.js';
import { keyWith } from './helpers/apiKeys.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { waitFor } from './helpers/wait.js';
import { openWriteQueue } from './helpers/writeQueue.js';

interface ErrorBody {
  error: { type: string; code: string; message: string; param?: string };
}

const document = buildOpenApiDocument(routeTable());
const writeMethods = new Set(['post', 'patch', 'delete']);

/** Every write operation of the document, with its path's parameters filled in. */
const writeOperations = Object.entries(document.paths).flatMap(([template, item]) =>
  Object.keys(item)
    .filter((method) => writeMethods.has(method) && template.startsWith('/api/v1/'))
    .map((method) => ({
      method: method.toUpperCase(),
      path: template.replace(/\{\w+\}/g, '1'),
      permission: String(item[method]!['x-required-permission']),
    })),
);

describe('every route declares its permission', () => {
  test('the document shows x-required-permission on every operation of the API', () => {
    const missing = Object.entries(document.paths).flatMap(([template, item]) =>
      Object.entries(item)
        .filter(() => template.startsWith('/api/v1/') && template !== '/api/v1/openapi.json')
        .filter(([method, operation]) => {
          const permission = operation['x-required-permission'];
          const level = method === 'get' ? 'read' : 'write';
          return typeof permission !== 'string' || !permission.endsWith(`:${level}`);
        })
        .map(([method]) => `${method} ${template}`),
    );
    expect(missing).toEqual([]);
    expect(document.paths['/api/v1/gifts']!.post!['x-required-permission']).toBe('gifts:write');
    expect(document.paths['/api/v1/reports/retention']!.get!['x-required-permission']).toBe(
      'reports:read',
    );
  });

  test('a route without one stops the build, named', () => {
    const routes = routeTable();
    const [first, ...rest] = routes;
    const undeclared = { ...first!, permission: undefined };
    expect(() => checkRoutePermissions([undeclared, ...rest])).toThrow(
      `${first!.method.toUpperCase()} /api/v1${first!.path} declares no permission`,
    );
    expect(() => buildOpenApiDocument([{ ...first!, permission: undefined! }])).toThrow(
      'declares no permission',
    );
    expect(() =>
      checkRoutePermissions([
        { method: 'get', path: '/x', permission: { group: 'gifts', level: 'write' } },
      ]),
    ).toThrow('a GET needs read');
  });
});

describe('a read-only key', () => {
  let service: TestService;
  let readOnly: string;
  beforeAll(async () => {
    service = await startTestService();
    readOnly = (await keyWith(service.db, service.tenant.institutionId, { '*': 'read' })).key;
  });
  afterAll(async () => {
    await service?.close();
  });

  const writesSoFar = async () =>
    (await service.count('events')) + (await service.count('write_receipts'));

  test('gets 403 on every write operation of the document, its dry run too, and nothing is written', async () => {
    expect(writeOperations.length).toBeGreaterThan(40);
    const before = await writesSoFar();
    for (const operation of writeOperations) {
      for (const query of ['', '?dry_run=true']) {
        const response = await service.call<ErrorBody>(
          operation.method,
          `${operation.path}${query}`,
          {
            key: readOnly,
            headers: { 'Idempotency-Key': `read-only-${operation.method}-${operation.path}` },
            ...(operation.method === 'DELETE' ? {} : { body: {} }),
          },
        );
        const what = `${operation.method} ${operation.path}${query}`;
        expect([what, response.status]).toEqual([what, 403]);
        expect(response.body.error.type).toBe('permission_error');
        expect(response.body.error.code).toBe('insufficient_permissions');
        // Refused before the rate limit: the key's budget is not spent on it.
        expect(response.headers.get('RateLimit-Remaining')).toBeNull();
        const [group] = operation.permission.split(':');
        expect(response.body.error.message).toContain(
          `This key has read access to ${group}; ${operation.method} `,
        );
        expect(response.body.error.message).toContain(`needs ${operation.permission}.`);
      }
    }
    expect(await writesSoFar()).toBe(before);
  });

  test('gets 403 on the replay of a stored answer, and reads as any key', async () => {
    const body = { name: 'Reunion 2026', color: '#1F6FEB' };
    const headers = { 'Idempotency-Key': 'tag-reunion' };
    const created = await service.call('POST', '/api/v1/tags', { body, headers });
    expect(created.status).toBe(201);
    const replay = await service.call<ErrorBody>('POST', '/api/v1/tags', {
      key: readOnly,
      body,
      headers,
    });
    expect(replay.status).toBe(403);
    expect(replay.headers.get('Idempotent-Replayed')).toBeNull();
    expect(replay.body.error.message).toBe(
      'This key has read access to tags; POST /api/v1/tags needs tags:write.',
    );
    const read = await service.call('GET', `/api/v1/tags/${String(created.body.id)}`, {
      key: readOnly,
    });
    expect(read.status).toBe(200);
    expect((await service.call('GET', '/api/v1/tags', { key: readOnly })).status).toBe(200);
  });

  test('a key reads only the groups it has; write implies read', async () => {
    const giftsOnly = (
      await keyWith(service.db, service.tenant.institutionId, { gifts: 'write', '*': 'none' })
    ).key;
    const refused = await service.call<ErrorBody>('GET', '/api/v1/donors/1', { key: giftsOnly });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe(
      'This key has no access to donors; GET /api/v1/donors/{id} needs donors:read.',
    );
    expect((await service.call('GET', '/api/v1/gifts', { key: giftsOnly })).status).toBe(200);
    const dryRun = await service.call('POST', '/api/v1/tags?dry_run=true', {
      key: giftsOnly,
      body: { name: 'x' },
    });
    expect(dryRun.status).toBe(403);
  });

  test('a key made before permissions (the operator’s) keeps full access', async () => {
    const stored = await service.db.oneFirst(sql.unsafe`
      SELECT permissions FROM api_keys WHERE id = ${service.tenant.apiKeyId}`);
    expect(stored).toEqual({ '*': 'write' });
    const created = await service.call('POST', '/api/v1/tags?dry_run=true', {
      body: { name: 'y' },
    });
    expect(created.status).toBe(201);
  });
});

describe('an expired key', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
  });

  test('gets 401 api_key_expired, and a write queued before its expiry commits nothing', async () => {
    const key = await keyWith(service.db, service.tenant.institutionId, { '*': 'write' });
    const queue = openWriteQueue(service.config, service.tenant.institutionId);
    await Promise.all(service.workers.map((running) => running.worker.pause()));
    try {
      const before = await service.count('tags');
      const pending = service.call<ErrorBody>('POST', '/api/v1/tags', {
        key: key.key,
        body: { name: 'Queued before expiry' },
      });
      await waitFor(async () => (await queue.getJobCounts('waiting')).waiting === 1);
      await service.db.query(sql.unsafe`
        UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = ${key.id}`);
      for (const running of service.workers) running.worker.resume();
      const response = await pending;
      expect(response.status).toBe(401);
      expect(await service.count('tags')).toBe(before);
    } finally {
      for (const running of service.workers) running.worker.resume();
      await queue.close();
    }
    const after = await service.call<ErrorBody>('GET', '/api/v1/institution', { key: key.key });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('api_key_expired');
  });
});
