import { request, type IncomingHttpHeaders } from 'node:http';
import { sql } from 'slonik';
import { expectDocumented } from './helpers/contract.js';
import { startTestService, type TestService } from './helpers/harness.js';

interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    request_id: string;
    param?: string;
    errors?: { param: string; code: string; message: string }[];
  };
}

interface Sent<T = Record<string, unknown>> {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: T;
}

interface SendOptions {
  /** The tenant's key unless given; null sends none. */
  key?: string | null;
  /** Header values are sent as they are; an array sends the header once per element. */
  headers?: Record<string, string | string[]>;
  /** A JSON body with Content-Type application/json unless headers say otherwise. */
  json?: unknown;
  /** Sent byte for byte; no Content-Type is added. */
  raw?: string;
  /** Stream the body in chunks without a Content-Length. */
  chunked?: boolean;
}

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

/** node:http rather than fetch, so that headers go out exactly as written (tabs, latin1, twice, absent). */
function send<T = Record<string, unknown>>(
  method: string,
  path: string,
  options: SendOptions = {},
): Promise<Sent<T>> {
  const headers: Record<string, string | string[]> = {};
  const key = options.key === undefined ? service.tenant.key : options.key;
  if (key !== null) headers['X-Service-API-Key'] = key;
  let body = options.raw;
  if (body === undefined && options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['Content-Type'] = 'application/json';
  }
  Object.assign(headers, options.headers);
  if (body !== undefined && !options.chunked)
    headers['Content-Length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, service.url), { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const sent = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          body: (text ? JSON.parse(text) : null) as T,
        };
        // Every answer, however malformed the request, must be one the OpenAPI document allows.
        const fetchHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined)
            fetchHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        try {
          expectDocumented({
            method,
            path,
            status: sent.status,
            headers: fetchHeaders,
            body: sent.body,
          });
        } catch (error) {
          reject(error as Error);
          return;
        }
        resolve(sent);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined && options.chunked) {
      for (let offset = 0; offset < body.length; offset += 16 * 1024)
        req.write(body.slice(offset, offset + 16 * 1024));
    } else if (body !== undefined) {
      req.write(body);
    }
    req.end();
  });
}

/** Strings that would betray internals: stack frames, source paths, SQL or Postgres messages. */
const leaks = [
  /\n\s*at /,
  /\bat \S+ \(/,
  /\S+\.(ts|js|mjs|cjs):\d+/,
  /node_modules/,
  /\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|WHERE|RETURNING)\b/,
  /syntax error|violates|duplicate key|relation "|column "|invalid byte sequence|stack/i,
];

/** The documented envelope, with request_id equal to the Request-Id header, and nothing internal. */
function expectError(
  response: Sent,
  status: number,
  type: string,
  code: string,
): ErrorEnvelope['error'] {
  const body = response.body as unknown as ErrorEnvelope;
  expect({ status: response.status, code: body?.error?.code }).toEqual({ status, code });
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ type, code, message: expect.any(String) });
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(response.headers['request-id']).toMatch(/^req_\w+$/);
  expect(body.error.request_id).toBe(response.headers['request-id']);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  for (const pattern of leaks) expect(response.text).not.toMatch(pattern);
  return body.error;
}

const tables = ['donors', 'gifts', 'funds', 'users', 'write_receipts'];
async function rowCount(): Promise<number> {
  const counts = await Promise.all(tables.map((table) => service.count(table)));
  return counts.reduce((sum, n) => sum + n, 0);
}

let emailCounter = 0;
/** A donor create that would succeed, so that only the check under test can stop it. */
const validDonor = () => ({
  role: 'Individual',
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: `donor${(emailCounter += 1)}@example.org`,
});

/** Sends a request that must fail and checks that nothing was written. */
async function refused(method: string, path: string, options: SendOptions): Promise<Sent> {
  const before = await rowCount();
  const response = await send(method, path, options);
  expect(await rowCount()).toBe(before);
  return response;
}

describe('Request-Id', () => {
  test.each([
    ['GET', '/health', null],
    ['GET', '/ready', null],
    ['GET', '/api/v1/institution', undefined],
  ] as const)('a successful %s %s carries a Request-Id header', async (method, path, key) => {
    const response = await send(method, path, { key });
    expect(response.status).toBe(200);
    expect(response.headers['request-id']).toMatch(/^req_\w+$/);
  });

  test('a create, its dry run and its idempotent replay each carry a Request-Id of their own', async () => {
    const body = validDonor();
    const dryRun = await send('POST', '/api/v1/donors?dry_run=true', { json: body });
    const created = await send('POST', '/api/v1/donors', {
      json: body,
      headers: { 'Idempotency-Key': 'request-id-1' },
    });
    const replayed = await send('POST', '/api/v1/donors', {
      json: body,
      headers: { 'Idempotency-Key': 'request-id-1' },
    });
    expect([dryRun.status, created.status, replayed.status]).toEqual([201, 201, 201]);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    const ids = [dryRun, created, replayed].map((response) => response.headers['request-id']);
    for (const id of ids) expect(id).toMatch(/^req_\w+$/);
    expect(new Set(ids).size).toBe(3);
  });

  test('a Request-Id sent by the client is not echoed back as ours', async () => {
    const response = await send('GET', '/api/v1/nope', {
      headers: { 'Request-Id': 'req_client_chosen' },
    });
    const error = expectError(response, 404, 'invalid_request_error', 'route_not_found');
    expect(error.request_id).not.toBe('req_client_chosen');
  });
});

describe('routes and methods', () => {
  test.each([
    ['GET', '/', null],
    ['GET', '/nope', null],
    ['GET', '/api/v2/donors', null],
    ['POST', '/api/v2/donors', null],
    ['GET', '/api/v1/nope', undefined],
    ['GET', '/api/v1/donors/1/gifts', undefined],
    ['GET', '/api/v1/%E0%A4%A', undefined],
  ] as const)('%s %s answers 404 route_not_found', async (method, path, key) => {
    const error = expectError(
      await send(method, path, { key }),
      404,
      'invalid_request_error',
      'route_not_found',
    );
    expect(error.param).toBeUndefined();
  });

  test('a path parameter that cannot be percent-decoded is an unknown path, not a 500', async () => {
    expectError(
      await send('GET', '/api/v1/donors/%E0%A4%A'),
      404,
      'invalid_request_error',
      'route_not_found',
    );
  });

  test('an unknown path under /api/v1 without a key is refused before the route is looked up', async () => {
    expectError(
      await send('GET', '/api/v1/nope', { key: null }),
      401,
      'authentication_error',
      'missing_api_key',
    );
  });

  test.each([
    ['DELETE', '/api/v1/institution', ['GET']],
    ['PUT', '/api/v1/institution', ['GET']],
    ['OPTIONS', '/api/v1/institution', ['GET']],
    ['PUT', '/api/v1/donors/1', ['GET', 'PATCH', 'DELETE']],
    ['POST', '/api/v1/donors/1', ['GET', 'PATCH', 'DELETE']],
    ['PUT', '/api/v1/gifts/1', ['GET', 'PATCH', 'DELETE']],
  ])('%s %s answers 405 method_not_allowed with an Allow header', async (method, path, allowed) => {
    const response = await refused(method, path, { json: validDonor() });
    expectError(response, 405, 'invalid_request_error', 'method_not_allowed');
    const allow = String(response.headers.allow ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== 'HEAD');
    expect(allow.sort()).toEqual([...allowed].sort());
  });

  // Route and method are decided before the body: a client who used the wrong path or method
  // should be told so, not that the body it sent there was not JSON.
  test('an unknown path answers 404 even when the body is not JSON', async () => {
    const response = await send('POST', '/api/v1/nope', {
      raw: 'hello',
      headers: { 'Content-Type': 'text/plain' },
    });
    expectError(response, 404, 'invalid_request_error', 'route_not_found');
  });

  test('a wrong method answers 405 even when the body is malformed JSON', async () => {
    const response = await send('POST', '/api/v1/institution', {
      raw: '{',
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(response, 405, 'invalid_request_error', 'method_not_allowed');
  });
});

describe('request bodies', () => {
  test.each([
    ['an unterminated object', '{"role":"Individual"'],
    ['a missing value', '{"role":}'],
    ['single quotes', "{'role':'Individual'}"],
    ['a trailing comma', '{"role":"Individual",}'],
    ['bare words', 'role=Individual'],
    ['a JSON object followed by garbage', '{"role":"Individual"} x'],
  ])('%s is 400 invalid_json', async (_label, raw) => {
    const response = await refused('POST', '/api/v1/donors', {
      raw,
      headers: { 'Content-Type': 'application/json' },
    });
    const error = expectError(response, 400, 'invalid_request_error', 'invalid_json');
    expect(error.message).not.toContain('Unexpected token');
  });

  test.each([
    ['an array', '[]'],
    ['an array holding a valid donor', JSON.stringify([validDonor()])],
    ['a string', '"donor"'],
    ['a number', '42'],
    ['null', 'null'],
    ['a boolean', 'true'],
  ])('JSON that is %s rather than an object is 400 invalid_json on create', async (_label, raw) => {
    const response = await refused('POST', '/api/v1/donors', {
      raw,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(response, 400, 'invalid_request_error', 'invalid_json');
  });

  test.each([['[]'], ['"x"'], ['0'], ['null']])(
    'JSON %s is 400 invalid_json on update and changes nothing',
    async (raw) => {
      const created = await send<{ id: number; email: string }>('POST', '/api/v1/donors', {
        json: validDonor(),
      });
      expect(created.status).toBe(201);
      const response = await send('PATCH', `/api/v1/donors/${created.body.id}`, {
        raw,
        headers: { 'Content-Type': 'application/json' },
      });
      expectError(response, 400, 'invalid_request_error', 'invalid_json');
      const after = await send<{ email: string; updated_at: string }>(
        'GET',
        `/api/v1/donors/${created.body.id}`,
      );
      expect(after.body).toMatchObject(created.body);
    },
  );

  test.each([
    ['text/plain', JSON.stringify(validDonor())],
    ['application/x-www-form-urlencoded', 'role=Individual&first_name=Ada&last_name=Lovelace'],
    [
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="role"\r\n\r\nIndividual\r\n--x--',
    ],
    ['application/xml', '<donor/>'],
    ['application/json-patch+json', '[]'],
  ])('a POST with Content-Type %s is 415 unsupported_media_type', async (contentType, raw) => {
    const response = await refused('POST', '/api/v1/donors', {
      raw,
      headers: { 'Content-Type': contentType },
    });
    expectError(response, 415, 'invalid_request_error', 'unsupported_media_type');
  });

  test('a POST with a JSON body but no Content-Type is 415 unsupported_media_type', async () => {
    const response = await refused('POST', '/api/v1/donors', { raw: JSON.stringify(validDonor()) });
    expectError(response, 415, 'invalid_request_error', 'unsupported_media_type');
  });

  test('a PATCH with Content-Type text/plain is 415 and changes nothing', async () => {
    const created = await send<{ id: number }>('POST', '/api/v1/donors', { json: validDonor() });
    const response = await send('PATCH', `/api/v1/donors/${created.body.id}`, {
      raw: JSON.stringify({ first_name: 'Changed' }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expectError(response, 415, 'invalid_request_error', 'unsupported_media_type');
    const after = await send('GET', `/api/v1/donors/${created.body.id}`);
    expect(after.body).toMatchObject(created.body);
  });

  test.each([
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/json;charset=UTF-8',
  ])('Content-Type %s is accepted', async (contentType) => {
    const response = await send('POST', '/api/v1/donors', {
      raw: JSON.stringify(validDonor()),
      headers: { 'Content-Type': contentType },
    });
    expect(response.status).toBe(201);
  });

  /** A donor body of exactly `bytes` bytes whose phone is far too long, so it fails validation. */
  const paddedBody = (bytes: number) => {
    const base = JSON.stringify({ ...validDonor(), phone: '' });
    return base.replace('"phone":""', `"phone":"${'1'.repeat(bytes - Buffer.byteLength(base))}"`);
  };

  test('a body of exactly 100 KiB is read (and here fails validation), one byte more is 413', async () => {
    const atLimit = paddedBody(100 * 1024);
    expect(Buffer.byteLength(atLimit)).toBe(102400);
    const read = await refused('POST', '/api/v1/donors', {
      raw: atLimit,
      headers: { 'Content-Type': 'application/json' },
    });
    const error = expectError(read, 422, 'invalid_request_error', 'validation_failed');
    expect(error.errors).toEqual([expect.objectContaining({ param: 'phone', code: 'too_long' })]);

    const over = paddedBody(100 * 1024 + 1);
    const response = await refused('POST', '/api/v1/donors', {
      raw: over,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(response, 413, 'invalid_request_error', 'payload_too_large');
  });

  test('a chunked body over 100 KiB (no Content-Length) is 413 payload_too_large', async () => {
    const response = await refused('POST', '/api/v1/donors', {
      raw: paddedBody(150 * 1024),
      chunked: true,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(response, 413, 'invalid_request_error', 'payload_too_large');
  });

  test('a string holding a NUL character is a validation error naming the field, not a 500', async () => {
    const body = {
      ...validDonor(),
      first_name: 'Ada\u0000',
      address: { line1: '1 Main St', city: 'Spring\u0000field' },
    };
    const response = await refused('POST', '/api/v1/donors', { json: body });
    const error = expectError(response, 422, 'invalid_request_error', 'validation_failed');
    expect(error.errors?.map((e) => [e.param, e.code])).toEqual([
      ['first_name', 'invalid_format'],
      ['address.city', 'invalid_format'],
    ]);
    const dryRun = await refused('POST', '/api/v1/donors?dry_run=true', { json: body });
    expectError(dryRun, 422, 'invalid_request_error', 'validation_failed');
  });

  test.each([
    ['objects', (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`],
    ['arrays', (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`],
  ])('deeply nested %s inside a body are 400 invalid_json, not a 500', async (_label, nest) => {
    const raw = JSON.stringify({ ...validDonor(), address: '__NESTED__' }).replace(
      '"__NESTED__"',
      nest(15000),
    );
    expect(Buffer.byteLength(raw)).toBeLessThan(100 * 1024);
    const response = await refused('POST', '/api/v1/donors', {
      raw,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(response, 400, 'invalid_request_error', 'invalid_json');
  });
});

describe('dry_run', () => {
  test.each([
    ['query dry_run=true', '?dry_run=true', {}],
    ['query dry_run=TRUE', '?dry_run=TRUE', {}],
    ['query dry_run=True', '?dry_run=True', {}],
    ['header Dry-Run: true', '', { 'Dry-Run': 'true' }],
    ['header Dry-Run: tRUE', '', { 'Dry-Run': 'tRUE' }],
    ['query and header that agree', '?dry_run=true', { 'Dry-Run': 'TRUE' }],
  ])('%s is a dry run: 201 with id 0 and nothing written', async (_label, query, headers) => {
    const before = await rowCount();
    const response = await send<{ id: number; object: string }>('POST', `/api/v1/donors${query}`, {
      json: validDonor(),
      headers,
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ id: 0, object: 'donor' });
    expect(response.headers.location).toBeUndefined();
    expect(await rowCount()).toBe(before);
  });

  test.each([
    ['query dry_run=false', '?dry_run=false', {}],
    ['query dry_run=FALSE', '?dry_run=FALSE', {}],
    ['header Dry-Run: False', '', { 'Dry-Run': 'False' }],
    ['query and header both false', '?dry_run=false', { 'Dry-Run': 'false' }],
  ])('%s is a real write', async (_label, query, headers) => {
    const before = await service.count('donors');
    const response = await send<{ id: number }>('POST', `/api/v1/donors${query}`, {
      json: validDonor(),
      headers,
    });
    expect(response.status).toBe(201);
    expect(response.body.id).toBeGreaterThan(0);
    expect(await service.count('donors')).toBe(before + 1);
  });

  test.each([
    ['dry_run=maybe', '?dry_run=maybe', {}, 'dry_run'],
    ['dry_run=1', '?dry_run=1', {}, 'dry_run'],
    ['dry_run=yes', '?dry_run=yes', {}, 'dry_run'],
    ['an empty dry_run', '?dry_run=', {}, 'dry_run'],
    ['dry_run with no value', '?dry_run', {}, 'dry_run'],
    ['dry_run=%20true', '?dry_run=%20true', {}, 'dry_run'],
    ['a repeated dry_run', '?dry_run=true&dry_run=true', {}, 'dry_run'],
    ['repeated dry_run values that differ', '?dry_run=true&dry_run=false', {}, 'dry_run'],
    ['Dry-Run: maybe', '', { 'Dry-Run': 'maybe' }, 'Dry-Run'],
    ['an empty Dry-Run header', '', { 'Dry-Run': '' }, 'Dry-Run'],
    ['Dry-Run sent twice', '', { 'Dry-Run': ['true', 'true'] }, 'Dry-Run'],
    ['query true and header false', '?dry_run=true', { 'Dry-Run': 'false' }, 'dry_run'],
    ['query false and header true', '?dry_run=false', { 'Dry-Run': 'true' }, 'dry_run'],
  ])('%s is 400 invalid_parameter and writes nothing', async (_label, query, headers, param) => {
    const response = await refused('POST', `/api/v1/donors${query}`, {
      json: validDonor(),
      headers,
    });
    const error = expectError(response, 400, 'invalid_request_error', 'invalid_parameter');
    expect(error.param).toBe(param);
  });
});

describe('unknown query parameters on writes', () => {
  test.each([
    ['POST', '?foo=bar', 'foo'],
    ['POST', '?dryrun=true', 'dryrun'],
    ['POST', '?dry_run[]=true', 'dry_run[]'],
    ['POST', '?limit=10', 'limit'],
    ['POST', '?dry_run=true&email=x%40example.org', 'email'],
    ['PATCH', '?foo=bar', 'foo'],
    ['DELETE', '?foo=bar', 'foo'],
  ])(
    '%s with %s is 400 invalid_parameter naming it, and writes nothing',
    async (method, query, param) => {
      const created = await send<{ id: number }>('POST', '/api/v1/donors', { json: validDonor() });
      const path = method === 'POST' ? '/api/v1/donors' : `/api/v1/donors/${created.body.id}`;
      const response = await refused(method, `${path}${query}`, {
        json:
          method === 'DELETE'
            ? undefined
            : method === 'PATCH'
              ? { first_name: 'Changed' }
              : validDonor(),
      });
      const error = expectError(response, 400, 'invalid_request_error', 'invalid_parameter');
      expect(error.param).toBe(param);
      const after = await send('GET', `/api/v1/donors/${created.body.id}`);
      expect(after.body).toMatchObject(created.body);
    },
  );
});

describe('Idempotency-Key', () => {
  test.each([
    ['that is empty', ''],
    ['of only spaces', '   '],
    ['of 256 characters', 'k'.repeat(256)],
    ['holding a tab', 'abc\tdef'],
    ['holding a non-ASCII letter (é)', 'caf\u00e9'],
    ['holding a no-break space (0xA0)', 'key\u00a0value'],
  ])(
    'an Idempotency-Key %s is 400 invalid_idempotency_key and writes nothing',
    async (_label, key) => {
      const response = await refused('POST', '/api/v1/donors', {
        json: validDonor(),
        headers: { 'Idempotency-Key': key },
      });
      const error = expectError(response, 400, 'idempotency_error', 'invalid_idempotency_key');
      expect(error.param).toBe('Idempotency-Key');
    },
  );

  test.each([
    ['the same value', ['twice-1', 'twice-1']],
    ['two values', ['twice-2', 'twice-3']],
  ])(
    'a key sent twice with %s is 400 invalid_idempotency_key and writes nothing',
    async (_label, keys) => {
      const response = await refused('POST', '/api/v1/donors', {
        json: validDonor(),
        headers: { 'Idempotency-Key': keys },
      });
      expectError(response, 400, 'idempotency_error', 'invalid_idempotency_key');
      // Neither value was consumed: each works alone afterwards.
      for (const key of new Set(keys)) {
        const fresh = await send('POST', '/api/v1/donors', {
          json: validDonor(),
          headers: { 'Idempotency-Key': key },
        });
        expect(fresh.status).toBe(201);
        expect(fresh.headers['idempotent-replayed']).toBeUndefined();
      }
    },
  );

  test('an invalid key on a dry run or an update is refused too', async () => {
    const created = await send<{ id: number }>('POST', '/api/v1/donors', { json: validDonor() });
    const dryRun = await refused('POST', '/api/v1/donors?dry_run=true', {
      json: validDonor(),
      headers: { 'Idempotency-Key': '' },
    });
    expectError(dryRun, 400, 'idempotency_error', 'invalid_idempotency_key');
    const update = await refused('PATCH', `/api/v1/donors/${created.body.id}`, {
      json: { first_name: 'Changed' },
      headers: { 'Idempotency-Key': 'x'.repeat(300) },
    });
    expectError(update, 400, 'idempotency_error', 'invalid_idempotency_key');
  });

  test('a key of exactly 255 printable ASCII characters is accepted, stored whole and replays', async () => {
    const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) =>
      String.fromCharCode(0x21 + i),
    ).join(' ');
    const key = `K${printable}`.repeat(3).slice(0, 254) + 'Z';
    expect(key).toHaveLength(255);
    expect(key).toMatch(/^[\x20-\x7e]+$/);
    const body = validDonor();
    const first = await send<{ id: number }>('POST', '/api/v1/donors', {
      json: body,
      headers: { 'Idempotency-Key': key },
    });
    expect(first.status).toBe(201);
    const replay = await send<{ id: number }>('POST', '/api/v1/donors', {
      json: body,
      headers: { 'Idempotency-Key': key },
    });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    const stored = await service.db.anyFirst(
      sql.unsafe`SELECT key FROM write_receipts WHERE source = 'client' AND institution_id = ${service.tenant.institutionId} AND length(key) = 255`,
    );
    expect(stored).toEqual([key]);
    // One character less is another key.
    const shorter = await send<{ id: number }>('POST', '/api/v1/donors', {
      json: validDonor(),
      headers: { 'Idempotency-Key': key.slice(0, 254) },
    });
    expect(shorter.status).toBe(201);
    expect(shorter.headers['idempotent-replayed']).toBeUndefined();
    expect(shorter.body.id).not.toBe(first.body.id);
  });
});
