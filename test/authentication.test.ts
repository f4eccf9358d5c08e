import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { insertApiKey, revokeApiKey } from '../common/institutions.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { revokeUnannounced } from './helpers/revocation.js';
import { waitFor } from './helpers/wait.js';
import { openWriteQueue } from './helpers/writeQueue.js';

interface ErrorBody {
  error: { type: string; code: string; message: string; request_id: string; param?: string };
}

interface InstitutionBody {
  id: number;
  object: string;
  name: string;
  currency: string;
  created_at: string;
}

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

/** A key the service could have issued (`dgs_key_<16 hex>_<32 base64url>`) but never did. */
const wellFormedUnknownKey = () =>
  `dgs_key_${randomBytes(8).toString('hex')}_${randomBytes(24).toString('base64url')}`;

/** The tenant's own key id with a fresh secret: right shape, right id, wrong secret. */
const wrongSecretFor = (key: string) => {
  const withoutSecret = key.slice(0, key.length - 32);
  let secret = randomBytes(24).toString('base64url');
  while (secret === key.slice(-32)) secret = randomBytes(24).toString('base64url');
  return `${withoutSecret}${secret}`;
};

/** Everything but the request id, which differs on every response. */
const withoutRequestId = (body: ErrorBody) =>
  Object.fromEntries(Object.entries(body.error).filter(([name]) => name !== 'request_id'));

const donorBody = (email: string) => ({
  role: 'Individual',
  first_name: 'Ada',
  last_name: 'Lovelace',
  email,
});

/**
 * A revocation reaches an API process as a notice from Postgres, a moment after it commits
 * (README, "Security notes"); until then the process may still answer on a key it confirmed.
 */
const refusedSoon = (call: () => Promise<{ status: number }>) =>
  waitFor(async () => (await call()).status === 401, 2_000, 'the revoked key to be refused');

async function writeRowCount(): Promise<number> {
  const counts = await Promise.all(
    ['donors', 'gifts', 'funds', 'users', 'write_receipts'].map((t) => service.count(t)),
  );
  return counts.reduce((sum, n) => sum + n, 0);
}

describe('requests without a key', () => {
  test.each([
    ['GET', '/api/v1/institution'],
    ['GET', '/api/v1/donors/1'],
    ['POST', '/api/v1/donors'],
  ])('%s %s without X-Service-API-Key answers 401 missing_api_key', async (method, path) => {
    const before = await writeRowCount();
    const response = await service.call<ErrorBody>(method, path, {
      key: null,
      body: method === 'POST' ? donorBody('nokey@example.org') : undefined,
    });
    expect(response.status).toBe(401);
    expect(response.body.error).toEqual({
      type: 'authentication_error',
      code: 'missing_api_key',
      message: expect.any(String),
      request_id: response.headers.get('Request-Id'),
    });
    expect(await writeRowCount()).toBe(before);
  });

  test('a key sent in another header (Authorization) counts as missing', async () => {
    const response = await service.call<ErrorBody>('GET', '/api/v1/institution', {
      key: null,
      headers: { Authorization: `Bearer ${service.tenant.key}` },
    });
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('missing_api_key');
  });

  test.each(['/health', '/ready'])('GET %s needs no key', async (path) => {
    const response = await service.call('GET', path, { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('Request-Id')).toMatch(/^req_/);
  });
});

describe('keys that are not valid', () => {
  const invalidKeys: [string, () => string][] = [
    ['an empty key', () => ''],
    ['a malformed key', () => 'not-a-key'],
    ['a key with the right prefix but a short secret', () => `${service.tenant.key.slice(0, -1)}`],
    ['the right key with a character appended', () => `${service.tenant.key}x`],
    ['the right key in upper case', () => service.tenant.key.toUpperCase()],
    ['a well-formed key that was never issued', wellFormedUnknownKey],
    ['the right key id with a wrong secret', () => wrongSecretFor(service.tenant.key)],
  ];

  test.each(invalidKeys)('%s answers 401 invalid_api_key', async (_label, keyOf) => {
    const key = keyOf();
    expect(key).not.toBe(service.tenant.key);
    const response = await service.call<ErrorBody>('GET', '/api/v1/institution', { key });
    expect(response.status).toBe(401);
    expect(response.body.error).toEqual({
      type: 'authentication_error',
      code: 'invalid_api_key',
      message: expect.any(String),
      request_id: response.headers.get('Request-Id'),
    });
  });

  test('every kind of invalid key gets the very same body, giving no hint which part was wrong', async () => {
    const bodies = [];
    for (const [, keyOf] of invalidKeys) {
      const response = await service.call<ErrorBody>('GET', '/api/v1/institution', {
        key: keyOf(),
      });
      bodies.push(withoutRequestId(response.body));
    }
    const revoked = await insertApiKey(service.db, service.tenant.institutionId);
    await revokeApiKey(service.db, revoked.id);
    const revokedResponse = await service.call<ErrorBody>('GET', '/api/v1/institution', {
      key: revoked.key,
    });
    bodies.push(withoutRequestId(revokedResponse.body));
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    // The message must not echo the key or name the part that failed.
    expect(JSON.stringify(bodies[0])).not.toMatch(/secret|unknown|revoked|malformed|format/i);
  });

  test('a write with an invalid key is refused and writes nothing', async () => {
    const before = await writeRowCount();
    const response = await service.call<ErrorBody>('POST', '/api/v1/donors', {
      key: wrongSecretFor(service.tenant.key),
      body: donorBody('wrong-secret@example.org'),
      headers: { 'Idempotency-Key': 'auth-invalid-write' },
    });
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('invalid_api_key');
    expect(await writeRowCount()).toBe(before);
  });
});

describe('several keys and revocation', () => {
  test('two keys of one institution both work and act for the same institution', async () => {
    const second = await insertApiKey(service.db, service.tenant.institutionId);
    expect(second.key).not.toBe(service.tenant.key);
    const [viaFirst, viaSecond] = await Promise.all([
      service.call<InstitutionBody>('GET', '/api/v1/institution'),
      service.call<InstitutionBody>('GET', '/api/v1/institution', { key: second.key }),
    ]);
    expect(viaFirst.status).toBe(200);
    expect(viaSecond.status).toBe(200);
    expect(viaSecond.body).toEqual(viaFirst.body);

    const created = await service.call<{ id: number }>('POST', '/api/v1/donors', {
      key: second.key,
      body: donorBody('second-key@example.org'),
    });
    expect(created.status).toBe(201);
    const readWithFirst = await service.call<{ id: number; email: string }>(
      'GET',
      `/api/v1/donors/${created.body.id}`,
    );
    expect(readWithFirst.status).toBe(200);
    expect(readWithFirst.body.email).toBe('second-key@example.org');
  });

  test('a revoked key stops working within moments while the institution’s other key keeps working', async () => {
    const doomed = await insertApiKey(service.db, service.tenant.institutionId);
    expect((await service.call('GET', '/api/v1/institution', { key: doomed.key })).status).toBe(
      200,
    );

    const revoked = await revokeApiKey(service.db, doomed.id);
    expect(revoked).toEqual({
      id: doomed.id,
      revoked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });

    // This process held the key as confirmed: its revocation is heard within moments.
    await refusedSoon(() => service.call('GET', '/api/v1/institution', { key: doomed.key }));
    const before = await writeRowCount();
    const read = await service.call<ErrorBody>('GET', '/api/v1/institution', { key: doomed.key });
    expect(read.status).toBe(401);
    expect(read.body.error.code).toBe('invalid_api_key');
    const write = await service.call<ErrorBody>('POST', '/api/v1/donors', {
      key: doomed.key,
      body: donorBody('revoked-key@example.org'),
    });
    expect(write.status).toBe(401);
    expect(write.body.error.code).toBe('invalid_api_key');
    expect(await writeRowCount()).toBe(before);

    expect((await service.call('GET', '/api/v1/institution')).status).toBe(200);
  });

  describe('a write admitted on a key confirmed seconds ago is confirmed again by the worker', () => {
    let donorId: number;
    beforeAll(async () => {
      const donor = await service.call<{ id: number }>('POST', '/api/v1/donors', {
        body: donorBody('revocation-donor@example.org'),
      });
      donorId = donor.body.id;
    });
    const giftBody = (subject: string) => ({
      donor_id: donorId,
      amount: 10,
      subject,
      gift_date: '2026-05-01',
    });

    /**
     * A key that has just written (so this API process holds it as confirmed), then revoked:
     * `heard`, announced as every revocation is; else without the notice, as when a request
     * arrives a moment before the notice does, so that only the worker's check can refuse it.
     */
    async function justRevokedKey(heard = false) {
      const key = await insertApiKey(service.db, service.tenant.institutionId);
      const write = await service.call('POST', '/api/v1/gifts', {
        key: key.key,
        body: giftBody('before revocation'),
      });
      expect(write.status).toBe(201);
      if (heard) await revokeApiKey(service.db, key.id);
      else await revokeUnannounced(service.db, key.id);
      return key;
    }

    test.each([
      ['a gift (one statement)', '/api/v1/gifts', () => giftBody('after revocation'), {}],
      [
        'a gift with an Idempotency-Key',
        '/api/v1/gifts',
        () => giftBody('after revocation, keyed'),
        { 'Idempotency-Key': `revoked-${randomBytes(4).toString('hex')}` },
      ],
      [
        'a donor (a transaction)',
        '/api/v1/donors',
        () => donorBody(`revoked-${randomBytes(4).toString('hex')}@example.org`),
        {},
      ],
    ])('%s right after revocation: 401, nothing written', async (_name, path, body, headers) => {
      const key = await justRevokedKey();
      const before = await writeRowCount();
      const response = await service.call<ErrorBody>('POST', path, {
        key: key.key,
        body: body(),
        headers,
      });
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('invalid_api_key');
      expect(await writeRowCount()).toBe(before);
    });

    test('updates and deletes right after revocation: 401, nothing changed', async () => {
      const gift = await service.call<{ id: number }>('POST', '/api/v1/gifts', {
        body: giftBody('to keep'),
      });
      const key = await justRevokedKey();
      const patch = await service.call<ErrorBody>('PATCH', `/api/v1/gifts/${gift.body.id}`, {
        key: key.key,
        body: { subject: 'changed by a revoked key' },
      });
      expect(patch.status).toBe(401);
      const remove = await service.call<ErrorBody>('DELETE', `/api/v1/gifts/${gift.body.id}`, {
        key: key.key,
      });
      expect(remove.status).toBe(401);
      const read = await service.call<{ subject: string }>('GET', `/api/v1/gifts/${gift.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body.subject).toBe('to keep');
    });

    test('a write refused right after revocation: 401, not the refusal, which would tell about the data', async () => {
      const key = await justRevokedKey();
      const before = await writeRowCount();
      const unknownDonor = await service.call<ErrorBody>('POST', '/api/v1/gifts', {
        key: key.key,
        body: { ...giftBody('refused'), donor_id: 987_654_321 },
      });
      expect(unknownDonor.status).toBe(401);
      expect(unknownDonor.body.error.code).toBe('invalid_api_key');
      const unknownGift = await service.call<ErrorBody>('PATCH', '/api/v1/gifts/987654321', {
        key: key.key,
        body: { subject: 'nothing here' },
      });
      expect(unknownGift.status).toBe(401);
      expect(await writeRowCount()).toBe(before);
    });

    test('reads and dry runs after revocation: 401 as soon as this process hears of it', async () => {
      const key = await justRevokedKey(true);
      await refusedSoon(() => service.call('GET', '/api/v1/institution', { key: key.key }));
      const calls = [
        service.call('GET', '/api/v1/institution', { key: key.key }),
        service.call('POST', '/api/v1/gifts?dry_run=true', { key: key.key, body: giftBody('dry') }),
        service.call('POST', '/api/v1/gifts', {
          key: key.key,
          body: giftBody('dry'),
          headers: { 'Dry-Run': 'true' },
        }),
      ];
      for (const response of await Promise.all(calls)) expect(response.status).toBe(401);
    });

    test('a retry of a finished write after revocation is 401, not its replay', async () => {
      const key = await insertApiKey(service.db, service.tenant.institutionId);
      const headers = { 'Idempotency-Key': `replay-${randomBytes(4).toString('hex')}` };
      const first = await service.call('POST', '/api/v1/gifts', {
        key: key.key,
        body: giftBody('replayed?'),
        headers,
      });
      expect(first.status).toBe(201);
      await revokeUnannounced(service.db, key.id);
      const retry = await service.call<ErrorBody>('POST', '/api/v1/gifts', {
        key: key.key,
        body: giftBody('replayed?'),
        headers,
      });
      expect(retry.status).toBe(401);
      expect(retry.body.error.code).toBe('invalid_api_key');
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
    });

    test('a refusal that needs no worker may still answer a just-revoked key until the notice arrives (the documented window)', async () => {
      const key = await justRevokedKey();
      const malformed = await service.call<ErrorBody>('POST', '/api/v1/gifts', {
        key: key.key,
        rawBody: '{"not json',
        headers: { 'Content-Type': 'application/json' },
      });
      expect(malformed.status).toBe(400);
    });

    test('once the revocation is heard, even a refusal that needs no worker answers 401', async () => {
      const key = await justRevokedKey(true);
      await refusedSoon(() => service.call('GET', '/api/v1/institution', { key: key.key }));
      const malformed = await service.call<ErrorBody>('POST', '/api/v1/gifts', {
        key: key.key,
        rawBody: '{"not json',
        headers: { 'Content-Type': 'application/json' },
      });
      expect(malformed.status).toBe(401);
    });

    test('a write queued before the revocation and run after it writes nothing', async () => {
      const key = await insertApiKey(service.db, service.tenant.institutionId);
      expect((await service.call('GET', '/api/v1/institution', { key: key.key })).status).toBe(200);
      const queue = openWriteQueue(service.config, service.tenant.institutionId);
      await Promise.all(service.workers.map((running) => running.worker.pause()));
      try {
        const before = await writeRowCount();
        const pending = service.call<ErrorBody>('POST', '/api/v1/gifts', {
          key: key.key,
          body: giftBody('queued'),
        });
        await waitFor(async () => (await queue.getJobCounts('waiting')).waiting === 1);
        await revokeApiKey(service.db, key.id);
        for (const running of service.workers) running.worker.resume();
        const response = await pending;
        expect(response.status).toBe(401);
        expect(await writeRowCount()).toBe(before);
      } finally {
        for (const running of service.workers) running.worker.resume();
        await queue.close();
      }
    });
  });

  test('revoking a key twice keeps the first revocation time', async () => {
    const key = await insertApiKey(service.db, service.tenant.institutionId);
    const first = await revokeApiKey(service.db, key.id);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await revokeApiKey(service.db, key.id);
    expect(second).toEqual(first);
  });

  test('revoking an unknown key id changes nothing', async () => {
    expect(await revokeApiKey(service.db, 'key_0000000000000000')).toBeNull();
    expect((await service.call('GET', '/api/v1/institution')).status).toBe(200);
  });
});

describe('GET /api/v1/institution', () => {
  test('returns exactly the caller’s institution', async () => {
    const response = await service.call<InstitutionBody>('GET', '/api/v1/institution');
    expect(response.status).toBe(200);
    const row = (await service.db.one(
      sql.unsafe`SELECT id::int, name, currency, created_at FROM institutions WHERE id = ${service.tenant.institutionId}`,
    )) as Record<string, unknown>;
    expect(response.body).toEqual({
      id: service.tenant.institutionId,
      object: 'institution',
      name: 'Test University',
      currency: 'USD',
      fiscal_year_start_month: 1,
      consent_mode: 'opt_out',
      created_at: new Date(String(row.created_at)).toISOString(),
    });
    expect(Object.keys(response.body).sort()).toEqual([
      'consent_mode',
      'created_at',
      'currency',
      'fiscal_year_start_month',
      'id',
      'name',
      'object',
    ]);
    expect(response.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test('another institution’s key sees that institution only', async () => {
    const other = await service.createTenant('Other College', 'EUR');
    const [mine, theirs] = await Promise.all([
      service.call<InstitutionBody>('GET', '/api/v1/institution'),
      service.call<InstitutionBody>('GET', '/api/v1/institution', { key: other.key }),
    ]);
    expect(theirs.status).toBe(200);
    expect(theirs.body).toMatchObject({
      id: other.institutionId,
      object: 'institution',
      name: 'Other College',
      currency: 'EUR',
    });
    expect(mine.body).toMatchObject({
      id: service.tenant.institutionId,
      name: 'Test University',
      currency: 'USD',
    });
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  test('an unknown query parameter is refused with 400 invalid_parameter', async () => {
    const response = await service.call<ErrorBody>('GET', '/api/v1/institution?id=2');
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param: 'id' });
  });
});

describe('how keys are stored', () => {
  test('api_keys holds the SHA-256 of each key and no column holds the key text', async () => {
    const key = await insertApiKey(service.db, service.tenant.institutionId);
    const secret = key.key.slice(-32);
    const columns = await service.db.anyFirst(sql.unsafe`
      SELECT column_name FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name = 'api_keys'`);
    expect(columns.length).toBeGreaterThan(0);
    const row = (await service.db.one(
      sql.unsafe`SELECT * FROM api_keys WHERE id = ${key.id}`,
    )) as Record<string, unknown>;
    for (const column of columns) {
      const value = row[String(column)];
      const text = Buffer.isBuffer(value)
        ? `${value.toString('hex')} ${value.toString('latin1')}`
        : String(value);
      expect(text).not.toContain(secret);
      expect(text).not.toContain(key.key);
    }
    expect(row.secret_sha256).toEqual(createHash('sha256').update(key.key).digest());
  });

  test('no table in the database holds the text of any key', async () => {
    const tables = await service.db.anyFirst(sql.unsafe`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
    expect(tables).toContain('api_keys');
    const secret = service.tenant.key.slice(-32);
    for (const table of tables) {
      const found = await service.db.oneFirst(sql.unsafe`
        SELECT count(*)::int FROM ${sql.identifier([String(table)])} t
        WHERE strpos(to_jsonb(t)::text, ${secret}) > 0`);
      expect({ table, found }).toEqual({ table, found: 0 });
    }
  });

  test('keys carry at least 128 random bits and are never issued twice', async () => {
    const keys = await Promise.all(
      Array.from({ length: 5 }, () => insertApiKey(service.db, service.tenant.institutionId)),
    );
    expect(new Set(keys.map((k) => k.key)).size).toBe(5);
    expect(new Set(keys.map((k) => k.id)).size).toBe(5);
    for (const { id, key } of keys) {
      expect(key).toContain(id);
      const secret = key.slice(key.indexOf(id) + id.length + 1);
      // base64url: 6 bits per character.
      expect(secret).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(secret.length * 6).toBeGreaterThanOrEqual(128);
    }
  });
});

describe('API_KEY_CACHE_SECONDS=0', () => {
  let strict: TestService;
  beforeAll(async () => {
    strict = await startTestService({ API_KEY_CACHE_SECONDS: '0' });
  });
  afterAll(async () => {
    await strict?.close();
  });

  test('every request asks Postgres: a just-revoked key gets 401 even where no worker is needed', async () => {
    const key = await insertApiKey(strict.db, strict.tenant.institutionId);
    expect((await strict.call('GET', '/api/v1/institution', { key: key.key })).status).toBe(200);
    await revokeApiKey(strict.db, key.id);
    const malformed = await strict.call<ErrorBody>('POST', '/api/v1/gifts', {
      key: key.key,
      rawBody: '{"not json',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(malformed.status).toBe(401);
    expect(malformed.body.error.code).toBe('invalid_api_key');
  });
});
