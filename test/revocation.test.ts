import { sql } from 'slonik';
import { z } from 'zod';
import { insertApiKey, revokeApiKey } from '../common/institutions.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { revokeUnannounced } from './helpers/revocation.js';
import { waitFor } from './helpers/wait.js';

/**
 * An API process answers reads on keys it confirmed a moment ago without asking Postgres, and
 * forgets a key when Postgres announces its revocation (README, "Security notes"). Here the
 * cache would trust a key for 300 s: only the announcement can make a revoked key stop working
 * within the bound these tests allow.
 */
const HEARD_WITHIN_MS = 2_000;

const donorBody = (email: string) => ({
  role: 'Individual',
  first_name: 'Ada',
  last_name: 'Lovelace',
  email,
});

describe('revocation with keys cached for 300 s', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ API_KEY_CACHE_SECONDS: '300' });
  });
  afterAll(async () => {
    await service?.close();
  });

  const count = async () =>
    (await service.count('donors')) + (await service.count('write_receipts'));

  test('a key the API holds as confirmed is refused, for reads and writes, soon after its revocation', async () => {
    const key = await insertApiKey(service.db, service.tenant.institutionId);
    const created = await service.call<{ id: number }>('POST', '/api/v1/donors', {
      key: key.key,
      body: donorBody('cached-key@example.org'),
    });
    expect(created.status).toBe(201);
    const reads = [
      '/api/v1/institution',
      '/api/v1/donors',
      `/api/v1/donors/${created.body.id}`,
      '/api/v1/gifts?limit=5',
    ];
    for (const path of reads)
      expect((await service.call('GET', path, { key: key.key })).status).toBe(200);

    await revokeApiKey(service.db, key.id);
    await waitFor(
      async () => (await service.call('GET', '/api/v1/donors', { key: key.key })).status === 401,
      HEARD_WITHIN_MS,
      'the revoked key to be refused',
    );

    const before = await count();
    for (const path of reads) {
      const read = await service.call<{ error: { code: string } }>('GET', path, { key: key.key });
      expect(read.status).toBe(401);
      expect(read.body.error.code).toBe('invalid_api_key');
    }
    const dryRun = await service.call('POST', '/api/v1/donors?dry_run=true', {
      key: key.key,
      body: donorBody('dry-run@example.org'),
    });
    expect(dryRun.status).toBe(401);
    const write = await service.call('POST', '/api/v1/donors', {
      key: key.key,
      body: donorBody('after-revocation@example.org'),
    });
    expect(write.status).toBe(401);
    expect(await count()).toBe(before);
    // The institution's own key is untouched.
    expect((await service.call('GET', '/api/v1/donors')).status).toBe(200);
  });

  /** The backend of the API's listening connection, once it listens. */
  const listener = () =>
    service.db.maybeOneFirst(sql.type(z.object({ pid: z.number() }))`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'dgs-api-revocations'
        AND query = 'LISTEN api_key_revoked'`);

  test('a lost listening connection forgets every key: a revocation made unheard is not missed', async () => {
    await waitFor(async () => (await listener()) !== null, 5_000, 'the API to listen');
    const key = await insertApiKey(service.db, service.tenant.institutionId);
    expect((await service.call('GET', '/api/v1/gifts', { key: key.key })).status).toBe(200);
    // A revocation nobody hears: the process keeps answering the key.
    await revokeUnannounced(service.db, key.id);
    expect((await service.call('GET', '/api/v1/gifts', { key: key.key })).status).toBe(200);

    // The listening connection is cut; the process reconnects and asks Postgres afresh.
    const cut = await listener();
    await service.db.query(sql.unsafe`SELECT pg_terminate_backend(${cut})`);
    await waitFor(
      async () => ![null, cut].includes(await listener()),
      5_000,
      'the API to listen again',
    );
    expect((await service.call('GET', '/api/v1/gifts', { key: key.key })).status).toBe(401);
    expect((await service.call('GET', '/api/v1/gifts')).status).toBe(200);
  });
});

describe('revocation while the API cannot listen for it', () => {
  let service: TestService;
  beforeAll(async () => {
    // Nothing listens on port 1: revocations cannot be heard, so reads must ask Postgres.
    service = await startTestService({
      API_KEY_CACHE_SECONDS: '300',
      DATABASE_MIGRATION_URL: 'postgres://postgres@127.0.0.1:1/postgres',
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  test('reads ask Postgres every time, so a revoked key is refused at once', async () => {
    const key = await insertApiKey(service.db, service.tenant.institutionId);
    expect((await service.call('GET', '/api/v1/gifts', { key: key.key })).status).toBe(200);
    await revokeApiKey(service.db, key.id);
    expect((await service.call('GET', '/api/v1/gifts', { key: key.key })).status).toBe(401);
    expect((await service.call('GET', '/api/v1/gifts')).status).toBe(200);
  });
});

describe('revocation while the API listens where nothing it writes is announced', () => {
  let service: TestService;
  beforeAll(async () => {
    // LISTEN works on the server's other database, but the service's revocations are announced in
    // its own: as through a transaction pooler, the connection would hear nothing.
    service = await startTestService({
      API_KEY_CACHE_SECONDS: '300',
      DATABASE_MIGRATION_URL: process.env.TEST_DATABASE_URL!,
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  test('the probe never arrives, so reads ask Postgres every time and a revoked key is refused at once', async () => {
    // Only this API's listener: other files' services listen on databases of their own.
    const elsewhere = new URL(process.env.TEST_DATABASE_URL!).pathname.slice(1);
    const listeners = async () =>
      service.db.oneFirst(sql.type(z.object({ count: z.number() }))`
        SELECT count(*)::int AS count FROM pg_stat_activity
        WHERE application_name = 'dgs-api-revocations' AND datname = ${elsewhere}`);
    // LISTEN took effect on the other database; its probe, sent where the service writes, never
    // arrives, so the API lets that connection go (and tries again in 30 s) instead of trusting it.
    await waitFor(async () => (await listeners()) > 0, 5_000, 'the API to listen elsewhere');
    await waitFor(async () => (await listeners()) === 0, 15_000, 'the API to give up on it');
    const key = await insertApiKey(service.db, service.tenant.institutionId);
    expect((await service.call('GET', '/api/v1/gifts', { key: key.key })).status).toBe(200);
    await revokeApiKey(service.db, key.id);
    expect((await service.call('GET', '/api/v1/gifts', { key: key.key })).status).toBe(401);
    expect((await service.call('GET', '/api/v1/gifts')).status).toBe(200);
  });
});
