import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { sql } from 'slonik';
import { runWrite, type WriteJob } from '../common/commands/runWrite.js';
import type { Command } from '../common/commands/command.js';
import { createDonor } from '../common/resources/donors/commands.js';
import { createGift } from '../common/resources/gifts/commands.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { writeJobFor } from './helpers/writeJob.js';
import { TcpProxy } from './helpers/tcpProxy.js';
import { waitFor } from './helpers/wait.js';

type Body = Record<string, unknown> & { id: number; error?: { code: string; type: string } };

const individual = (email: string) => ({
  role: 'Individual',
  first_name: 'Mary',
  last_name: 'Somerville',
  email,
});
const giftFor = (donorId: number) => ({
  donor_id: donorId,
  amount: 75,
  subject: 'Library',
  gift_date: '2026-04-01',
});

describe('a job delivered twice commits once', () => {
  let service: TestService;
  let donorId: number;
  beforeAll(async () => {
    service = await startTestService();
    donorId = (
      await service.call<Body>('POST', '/api/v1/donors', { body: individual('mary@example.org') })
    ).body.id;
  });
  afterAll(async () => {
    await service?.close();
  });

  const job = (
    idempotencyKey: string | null,
    command: Command = createGift,
    body: Record<string, unknown> = giftFor(donorId),
    requestId = 'req_redelivered',
  ): WriteJob => writeJobFor(service.tenant, command, body, idempotencyKey, requestId);

  test.each([
    ['a keyless write (receipt by request id)', null],
    ['a write with an Idempotency-Key', 'redelivered-key'],
  ])('%s', async (_label, key) => {
    const before = await service.count('gifts');
    const options = { dryRun: false, idempotencyTtlSeconds: 60 };
    const delivery = job(key, createGift, giftFor(donorId), `req_${key ?? 'keyless'}`);
    const first = await runWrite(service.db, createGift, delivery, options);
    const second = await runWrite(service.db, createGift, delivery, options);
    expect(first).toMatchObject({ ok: true, status: 201, replayed: false });
    expect(second).toMatchObject({ ok: true, status: 201, replayed: true });
    expect(second.ok && second.body).toEqual(first.ok && first.body);
    expect(await service.count('gifts')).toBe(before + 1);
  });

  test.each([
    ['a keyless write', null],
    ['a write with an Idempotency-Key', 'donor-twice'],
  ])(
    '%s that the data refuses the second time (its email is now taken) still replays the first',
    async (_label, key) => {
      const email = `twice-${key ?? 'keyless'}@example.org`;
      const options = { dryRun: false, idempotencyTtlSeconds: 60 };
      const donorJob = job(key, createDonor, individual(email), `req_donor_${key ?? 'keyless'}`);
      const first = await runWrite(service.db, createDonor, donorJob, options);
      const second = await runWrite(service.db, createDonor, donorJob, options);
      expect(first).toMatchObject({ ok: true, status: 201, replayed: false });
      expect(second).toMatchObject({ ok: true, status: 201, replayed: true });
      expect(second.ok && second.body).toEqual(first.ok && first.body);
      const stored = await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM donors WHERE email = ${email}`,
      );
      expect(stored).toBe(1);
    },
  );

  test('two deliveries running at the same time: one commits, the other replays it', async () => {
    const before = await service.count('gifts');
    const options = { dryRun: false, idempotencyTtlSeconds: 60 };
    const outcomes = await Promise.all([
      runWrite(service.db, createGift, job('concurrent-key'), options),
      runWrite(service.db, createGift, job('concurrent-key'), options),
    ]);
    expect(outcomes.map((outcome) => outcome.ok && outcome.replayed).sort()).toEqual([false, true]);
    const [a, b] = outcomes;
    expect(a!.ok && a!.body).toEqual(b!.ok && b!.body);
    expect(await service.count('gifts')).toBe(before + 1);
  });

  test('a key reused for a different request after it committed is a mismatch, and writes nothing', async () => {
    const options = { dryRun: false, idempotencyTtlSeconds: 60 };
    const first = await runWrite(service.db, createGift, job('reused-key'), options);
    expect(first).toMatchObject({ ok: true, status: 201 });
    const before = await service.count('gifts');
    const other = job('reused-key', createGift, { ...giftFor(donorId), amount: 80 });
    const second = await runWrite(service.db, createGift, other, options);
    expect(second).toMatchObject({
      ok: false,
      status: 422,
      error: { code: 'idempotency_key_request_mismatch' },
    });
    expect(await service.count('gifts')).toBe(before);
  });
});

describe('write timeout', () => {
  let service: TestService;
  let donorId: number;
  beforeAll(async () => {
    service = await startTestService({ WRITE_TIMEOUT_MS: '400' });
    donorId = (
      await service.call<Body>('POST', '/api/v1/donors', { body: individual('ann@example.org') })
    ).body.id;
  });
  afterAll(async () => {
    await service?.close();
  });

  test('no result in WRITE_TIMEOUT_MS is 504; a retry with the key gets the outcome once known, written once', async () => {
    const worker = service.workers[0]!.worker;
    await worker.pause();
    const post = () =>
      service.call<Body>('POST', '/api/v1/gifts', {
        body: giftFor(donorId),
        headers: { 'Idempotency-Key': 'slow-1' },
      });
    const started = Date.now();
    const timedOut = await post();
    // After this service's 400 ms, not the default 10 s (with room for a loaded machine).
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(timedOut.status).toBe(504);
    expect(timedOut.body.error).toMatchObject({ type: 'api_error', code: 'write_timeout' });
    const whileQueued = await post();
    expect(whileQueued.status).toBe(409);
    expect(await service.count('gifts')).toBe(0);

    worker.resume();
    let outcome = await post();
    await waitFor(
      async () => {
        outcome = await post();
        return outcome.status === 201;
      },
      5_000,
      'the queued write to finish',
    );
    expect(outcome.headers.get('idempotent-replayed')).toBe('true');
    expect(await service.count('gifts')).toBe(1);
  });
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('Redis unreachable', () => {
  let service: TestService;
  let redis: ChildProcess;
  let port: number;
  const startRedis = async () => {
    redis = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          const socket = net.connect(port, '127.0.0.1', () => {
            socket.destroy();
            resolve(true);
          });
          socket.on('error', () => resolve(false));
        }),
      5_000,
      'redis-server to listen',
    );
  };
  beforeAll(async () => {
    port = await freePort();
    await startRedis();
    service = await startTestService({ REDIS_URL: `redis://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await service?.close();
    redis?.kill('SIGKILL');
  });

  test('writes answer 503 at once, reads still work, and writes recover when Redis is back', async () => {
    const created = await service.call<Body>('POST', '/api/v1/donors', {
      body: individual('redis@example.org'),
    });
    expect(created.status).toBe(201);

    redis.kill('SIGKILL');
    await new Promise((resolve) => redis.once('exit', resolve));
    const started = Date.now();
    const refused = await service.call<Body>('POST', '/api/v1/donors', {
      body: individual('down@example.org'),
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ type: 'api_error', code: 'service_unavailable' });
    expect(Date.now() - started).toBeLessThan(3_000);
    const ready = await service.call<Body>('GET', '/ready', { key: null });
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ database: true, redis: false });
    const read = await service.call<Body>('GET', `/api/v1/donors/${created.body.id}`);
    expect(read.status).toBe(200);

    await startRedis();
    let recovered = refused;
    await waitFor(
      async () => {
        recovered = await service.call<Body>('POST', '/api/v1/donors', {
          body: individual('back@example.org'),
        });
        return recovered.status === 201;
      },
      10_000,
      'writes to recover',
    );
    expect(recovered.status).toBe(201);
    expect(await service.count('donors')).toBe(2);
  });
});

describe('Postgres unreachable', () => {
  let service: TestService;
  const proxy = new TcpProxy(
    Number(
      new URL(process.env.TEST_SERVICE_DATABASE_URL ?? 'postgres://x@127.0.0.1:5432').port || 5432,
    ),
  );
  beforeAll(async () => {
    await proxy.start();
    service = await startTestService(
      {},
      {
        serviceDatabaseUrl: (url) => {
          const routed = new URL(url);
          routed.port = String(proxy.port);
          return routed.toString();
        },
      },
    );
  });
  afterAll(async () => {
    await proxy.start();
    await service?.close();
    await proxy.stop();
  });

  test('requests answer 503, not 500 and not a hang, and recover when Postgres is back', async () => {
    const created = await service.call<Body>('POST', '/api/v1/donors', {
      body: individual('pg@example.org'),
    });
    expect(created.status).toBe(201);

    await proxy.stop();
    for (const [method, path, body] of [
      ['GET', `/api/v1/donors/${created.body.id}`, undefined],
      ['POST', '/api/v1/donors', individual('pg-down@example.org')],
    ] as const) {
      const started = Date.now();
      const response = await service.call<Body>(method, path, body ? { body } : {});
      expect(response.status).toBe(503);
      expect(response.body.error?.code).toBe('service_unavailable');
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    const ready = await service.call<Body>('GET', '/ready', { key: null });
    expect(ready.status).toBe(503);

    await proxy.start();
    await waitFor(
      async () => (await service.call('GET', `/api/v1/donors/${created.body.id}`)).status === 200,
      10_000,
      'reads to recover',
    );
    const again = await service.call<Body>('POST', '/api/v1/donors', {
      body: individual('pg-back@example.org'),
    });
    expect(again.status).toBe(201);
    expect(await service.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM donors`)).toBe(2);
  });
});
