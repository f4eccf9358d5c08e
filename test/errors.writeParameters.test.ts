// Error answers to writes with a bad dry_run, unknown query parameters or a bad Idempotency-Key.
import { sql } from 'slonik';
import {
  expectError,
  refused,
  rowCount,
  send,
  service,
  setUpErrorTests,
  validDonor,
} from './helpers/errors.js';

setUpErrorTests();

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
