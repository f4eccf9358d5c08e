// Secrets at rest (trust.md §4): what a user sees through HTTP, and what the database holds.
import { readdirSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { runner } from 'node-pg-migrate';
import { migrationsDir } from '../common/db/migrate.js';
import { createLogger } from '../common/logger.js';
import { keyringOf } from '../common/secrets.js';
import { startWorker } from '../worker/worker.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { waitFor } from './helpers/wait.js';

const KEY_A = '0a'.repeat(32);
const KEY_B = '0b'.repeat(32);
const idOf = (hex: string) => keyringOf({ SECRETS_KEY: hex, CURSOR_SECRET: '' }).current.id;

interface Endpoint {
  id: number;
  secret?: string;
}

let service: TestService;
let server: Server;
const received: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  service = await startTestService({
    SECRETS_KEY: KEY_A,
    WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${port}`,
  });
});

afterAll(async () => {
  await service?.close();
  await new Promise((resolve) => server?.close(resolve));
});

const hookUrl = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

const createEndpoint = (idempotencyKey: string) =>
  service.call<Endpoint>('POST', '/api/v1/webhook-endpoints', {
    body: { url: `${hookUrl()}/${idempotencyKey}`, enabled_events: ['donor.created'] },
    headers: { 'Idempotency-Key': idempotencyKey },
  });

const endpointRow = (id: number) =>
  service.db.one(sql.type(z.object({ secret: z.string(), previous_secret: z.string().nullable() }))`
    SELECT secret, previous_secret FROM webhook_endpoints WHERE id = ${id}`);

const receiptRow = (key: string) =>
  service.db.one(sql.type(z.object({ text: z.string(), sealed_fields: z.string().nullable() }))`
    SELECT response_body::text AS text, sealed_fields FROM write_receipts
    WHERE source = 'client' AND key = ${key}`);

/** The delivery to endpoint `name` of the donor `donorId`'s creation, verified with `secret`. */
async function deliveredAndVerified(name: string, donorId: number, secret: string) {
  const mine = (one: (typeof received)[number]) =>
    one.path === `/hook/${name}` && one.body.includes(`"id":${donorId},`);
  await waitFor(() => received.some(mine), 10_000, 'the delivery');
  const delivery = received.find(mine)!;
  return new Webhook(secret).verify(delivery.body, {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['webhook-signature']),
  }) as { type: string };
}

/** The endpoint made before sealing began (the first test). */
let legacy: Endpoint;

/** The sealing migration and every one after it: down to before sealing began, and up again. */
const sinceSealing = readdirSync(migrationsDir).filter(
  (file) => file.endsWith('.sql') && file >= '1735080000000',
).length;

const migrate = (direction: 'up' | 'down') =>
  runner({
    databaseUrl: service.config.DATABASE_MIGRATION_URL!,
    dir: migrationsDir,
    direction,
    count: sinceSealing,
    migrationsTable: 'pgmigrations',
    singleTransaction: true,
    log: () => {},
  });

const createDonor = async (name: string) => {
  const made = await service.call<{ id: number }>('POST', '/api/v1/donors', {
    body: {
      role: 'Individual',
      first_name: name,
      last_name: 'Sealed',
      email: `${name.toLowerCase()}@example.org`,
    },
  });
  expect(made.status).toBe(201);
  return made.body.id;
};

test('an endpoint row and a receipt stored in clear before sealing began: the migration marks the receipt, and both read as they are', async () => {
  legacy = (await createEndpoint('hook-legacy')).body;
  await migrate('down');
  await service.db.query(sql.unsafe`
    UPDATE webhook_endpoints SET secret = ${legacy.secret!} WHERE id = ${legacy.id}`);
  await service.db.query(sql.unsafe`
    UPDATE write_receipts SET response_body = ${sql.json(legacy)}
    WHERE source = 'client' AND key = 'hook-legacy'`);
  await migrate('up');
  expect(await receiptRow('hook-legacy')).toEqual({
    text: JSON.stringify(legacy),
    sealed_fields: 'clear',
  });
  const replay = await createEndpoint('hook-legacy');
  expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
  expect(replay.body).toEqual(legacy);
});

test('a created endpoint: its secret is answered, in clear nowhere in the database, answered again on a replay, and signs deliveries', async () => {
  const made = await createEndpoint('hook-1');
  expect(made.status).toBe(201);
  const secret = made.body.secret!;
  expect(secret).toMatch(/^whsec_/);

  const row = await endpointRow(made.body.id);
  expect(row.secret).not.toContain(secret.slice(6));
  expect(row.secret.startsWith(`sealed:v1:${idOf(KEY_A)}:`)).toBe(true);
  const receipt = await receiptRow('hook-1');
  expect(receipt.text).not.toContain(secret.slice(6));
  expect(JSON.parse(receipt.text).secret).toBeNull();
  expect(receipt.sealed_fields).toMatch(new RegExp(`^sealed:v1:${idOf(KEY_A)}:`));
  // Nor in its event, which GET /events and every webhook carry.
  const events = await service.db.anyFirst(sql.type(z.object({ data: z.string() }))`
    SELECT data::text AS data FROM events WHERE object_type = 'webhook_endpoint'`);
  expect(events.join()).not.toContain(secret.slice(6));

  const replay = await createEndpoint('hook-1');
  expect(replay.status).toBe(201);
  expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
  expect(replay.body).toEqual(made.body);

  const donorId = await createDonor('Ada');
  expect((await deliveredAndVerified('hook-1', donorId, secret)).type).toBe('donor.created');
});

test('an API key made: its receipt keeps the key sealed, and a replay answers it again', async () => {
  const headers = { 'Idempotency-Key': 'key-1' };
  const body = { name: 'Warehouse', permissions: { '*': 'read' } };
  const made = await service.call<{ key: string }>('POST', '/api/v1/api-keys', { body, headers });
  expect(made.status).toBe(201);
  const receipt = await receiptRow('key-1');
  expect(receipt.text).not.toContain(made.body.key);
  expect(receipt.sealed_fields).not.toContain(made.body.key);
  const replay = await service.call<{ key: string }>('POST', '/api/v1/api-keys', { body, headers });
  expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
  expect(replay.body).toEqual(made.body);
});

test('a rotation of SECRETS_KEY: a worker started with the new key and SECRETS_KEY_PREVIOUS seals every stored secret again, clear ones too, and replays and signing go on', async () => {
  const rotated = await createEndpoint('hook-rotated');
  const rotation = await service.call<Endpoint>(
    'POST',
    `/api/v1/webhook-endpoints/${rotated.body.id}/rotate-secret`,
    { body: {}, headers: { 'Idempotency-Key': 'rotate-1' } },
  );
  expect(rotation.status).toBe(200);
  const newSecret = rotation.body.secret!;
  expect((await endpointRow(rotated.body.id)).previous_secret).toMatch(/^sealed:v1:/);
  const legacySecret = legacy.secret!;
  const logger = createLogger('silent');
  const rotatedConfig = { ...service.config, SECRETS_KEY: KEY_B, SECRETS_KEY_PREVIOUS: KEY_A };
  const worker = await startWorker(rotatedConfig, logger);
  try {
    const underB = `sealed:v1:${idOf(KEY_B)}:`;
    for (const id of [rotated.body.id, legacy.id]) {
      const row = await endpointRow(id);
      expect(row.secret.startsWith(underB)).toBe(true);
      if (row.previous_secret !== null) expect(row.previous_secret.startsWith(underB)).toBe(true);
    }
    for (const key of ['hook-1', 'hook-rotated', 'rotate-1', 'hook-legacy', 'key-1']) {
      const receipt = await receiptRow(key);
      expect(receipt.sealed_fields?.startsWith(underB)).toBe(true);
    }
    expect((await receiptRow('hook-legacy')).text).not.toContain(legacySecret.slice(6));

    const replay = await service.call<Endpoint>(
      'POST',
      `/api/v1/webhook-endpoints/${rotated.body.id}/rotate-secret`,
      { body: {}, headers: { 'Idempotency-Key': 'rotate-1' } },
    );
    expect(replay.body.secret).toBe(newSecret);
    expect((await createEndpoint('hook-legacy')).body.secret).toBe(legacySecret);

    received.length = 0;
    const donorId = await createDonor('Grace');
    expect((await deliveredAndVerified('hook-legacy', donorId, legacySecret)).type).toBe(
      'donor.created',
    );
    expect((await deliveredAndVerified('hook-rotated', donorId, newSecret)).type).toBe(
      'donor.created',
    );
  } finally {
    await worker.close();
  }

  // Once everything is under the new key, the old one may go; a key that opens nothing stored
  // is refused in one line naming the key it would need.
  const stranger = { ...service.config, SECRETS_KEY: '0c'.repeat(32) };
  await expect(startWorker(stranger, logger)).rejects.toThrow(
    `a stored secret is sealed under key ${idOf(KEY_B)}, which neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS is: set it as SECRETS_KEY_PREVIOUS.`,
  );
});
