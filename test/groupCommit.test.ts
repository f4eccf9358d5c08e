import { Queue } from 'bullmq';
import { sql, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { insertApiKey } from '../common/institutions.js';
import { revokeUnannounced } from './helpers/revocation.js';
import { WRITE_JOB, type WriteBatch, type WriteSummary } from '../common/queue.js';
import { createRedis, redisTargetOf } from '../common/redis.js';
import type { Reply } from '../common/replies.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { holdDonorRow } from './helpers/rowLock.js';
import { newDonor } from './helpers/singleStatement.js';
import { waitFor } from './helpers/wait.js';
import {
  activeWriteWithKey,
  activeWrites,
  openWriteQueue,
  openWriteQueues,
} from './helpers/writeQueue.js';

/**
 * Gift creates that reach a worker together are committed together (worker/groupCommit.ts; its
 * batching is unit-tested in test/unit/groupCommit.test.ts). Whatever shares their statement,
 * each client must be told what it would have been told alone, and the database must hold
 * exactly that. The tests make creates share a statement by holding a donor row: the first
 * create waits on it, and those that arrive meanwhile go out together once it is released.
 */
type Body = Record<string, unknown> & { id: number; error?: { code: string } };

const WORKER_CONCURRENCY = 16;

let service: TestService;
let queue: Queue;
/** Every shard's queue: the two tenants' jobs may be in different ones. */
let allQueues: Queue[];
let other: Tenant;
let heldDonorId: number;
let donorId: number;
let otherDonorId: number;

beforeAll(async () => {
  service = await startTestService({ WORKER_CONCURRENCY: String(WORKER_CONCURRENCY) });
  queue = openWriteQueue(service.config, service.tenant.institutionId);
  allQueues = openWriteQueues(service.config);
  other = await service.createTenant('Other College', 'USD');
  heldDonorId = (await newDonor(service)).id;
  donorId = (await newDonor(service)).id;
  otherDonorId = (await newDonor(service, other.key)).id;
});

afterAll(async () => {
  await queue?.close();
  await allQueues?.[0]?.close();
  await service?.close();
});

const postGift = (key: string, donor: number, apiKey?: string) =>
  service.call<Body>('POST', '/api/v1/gifts', {
    ...(apiKey ? { key: apiKey } : {}),
    body: { donor_id: donor, amount: 40, subject: key, gift_date: '2026-06-01' },
    headers: { 'Idempotency-Key': key },
  });

const count = (query: FragmentSqlToken) =>
  service.db.oneFirst(
    sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM (${query}) AS q`,
  );
const giftsWithSubject = (subject: string) =>
  count(sql.fragment`SELECT 1 FROM gifts WHERE subject = ${subject}`);
const receiptText = (key: string) =>
  service.db.maybeOneFirst(sql.type(z.object({ text: z.string() }))`
    SELECT response_body::text AS text FROM write_receipts
    WHERE institution_id = ${service.tenant.institutionId} AND source = 'client' AND key = ${key}`);

/**
 * Sends a create that waits on a held donor row (one per institution in `held`: each
 * institution's statements go one at a time), then `send`s the rest while they wait, and releases
 * the rows once `writes` writes are in the worker: those wait for their institution's first
 * statement, and go out together after it.
 */
async function behindAHeldRow<T>(
  writes: number,
  send: () => Promise<T>,
  held: { donor: number; apiKey?: string }[] = [{ donor: heldDonorId }],
) {
  const holds = await Promise.all(held.map(({ donor }) => holdDonorRow(service.db, donor)));
  const blockers = held.map(({ donor, apiKey }) =>
    postGift(`blocker-${Math.random()}`, donor, apiKey),
  );
  let rest: Promise<T> | undefined;
  try {
    await waitFor(
      async () =>
        (await count(sql.fragment`
          SELECT 1 FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`)) >= held.length,
      5_000,
      'the first creates to wait on the held rows',
    );
    rest = send();
    await waitFor(
      async () => (await activeWrites(allQueues)) >= writes,
      5_000,
      `${writes} writes in the worker`,
    );
  } finally {
    for (const hold of holds) await hold.release();
  }
  for (const blocker of blockers) expect((await blocker).status).toBe(201);
  return rest;
}

test('creates committed together each get their own record; a refused one and a revoked key write nothing, the rest commit', async () => {
  const doomed = await insertApiKey(service.db, service.tenant.institutionId);
  // Confirmed now, so that the API admits its next write without asking Postgres (API_KEY_CACHE_SECONDS).
  expect((await service.call('GET', '/api/v1/institution', { key: doomed.key })).status).toBe(200);
  // Revoked without the notice that would make the API forget the key: only the worker refuses it.
  await revokeUnannounced(service.db, doomed.id);

  const keys = Array.from({ length: 10 }, (_, index) => `together-${index}`);
  // The refused creates' keys sort between the others' (a batch runs in key order), so each
  // committed create after them must still be matched to its own inserted row.
  const [accepted, foreign, revoked] = await behindAHeldRow(keys.length + 3, () =>
    Promise.all([
      Promise.all(keys.map((key) => postGift(key, donorId))),
      postGift('together-3-foreign', otherDonorId),
      postGift('together-6-revoked', donorId, doomed.key),
    ]),
  );

  for (const [index, response] of accepted.entries()) {
    expect(response.status).toBe(201);
    expect(response.body.subject).toBe(keys[index]);
    expect(response.headers.get('location')).toBe(`/api/v1/gifts/${response.body.id}`);
    const read = await service.call('GET', `/api/v1/gifts/${response.body.id}`);
    expect(read.body).toEqual(response.body);
    expect(await receiptText(keys[index]!)).toBe(JSON.stringify(response.body));
  }
  expect(new Set(accepted.map((response) => response.body.id)).size).toBe(keys.length);

  expect(foreign.status).toBe(422);
  expect(foreign.body.error).toMatchObject({
    code: 'validation_failed',
    errors: [expect.objectContaining({ param: 'donor_id', code: 'reference_not_found' })],
  });
  expect(revoked.status).toBe(401);
  expect(revoked.body.error?.code).toBe('invalid_api_key');
  expect(await receiptText('together-3-foreign')).toBeNull();
  expect(await receiptText('together-6-revoked')).toBeNull();
  expect(await giftsWithSubject('together-3-foreign')).toBe(0);
  expect(await giftsWithSubject('together-6-revoked')).toBe(0);
  expect(await service.count('gifts', other.institutionId)).toBe(0);
  expect(await count(sql.fragment`SELECT 1 FROM gifts WHERE subject LIKE 'together-%'`)).toBe(
    keys.length,
  );
  // Each create's event is a step of the shared statement: one per committed create, none else.
  const events = await service.db.any(sql.type(
    z.object({ object_id: z.number(), data: z.json(), request_id: z.string() }),
  )`
    SELECT object_id, data, request_id FROM events
    WHERE institution_id = ${service.tenant.institutionId} AND type = 'gift.created'
      AND data->>'subject' LIKE 'together-%'
    ORDER BY object_id`);
  expect(events).toEqual(
    accepted
      .map((response) => ({
        object_id: response.body.id,
        data: response.body,
        request_id: response.headers.get('request-id'),
      }))
      .sort((a, b) => a.object_id - b.object_id),
  );

  const replays = await Promise.all(keys.map((key) => postGift(key, donorId)));
  for (const [index, replay] of replays.entries()) {
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(JSON.stringify(replay.body)).toBe(JSON.stringify(accepted[index]!.body));
  }
  expect(
    await count(sql.fragment`SELECT 1 FROM events WHERE data->>'subject' LIKE 'together-%'`),
  ).toBe(keys.length);
});

test('two deliveries of one write committed together: it is written once, and both answer its record', async () => {
  const key = 'delivered-twice';
  let jobIds: string[] = [];
  let at = 0;
  // Both deliveries answer on the channel the job names; a second subscriber hears both.
  const heard: Reply[] = [];
  const listener = createRedis(
    redisTargetOf(service.config),
    'blocking',
    {},
    { shardedSubscribers: true },
  );
  const hear = (_channel: string, message: string) =>
    heard.push(...(JSON.parse(message) as Reply[]));
  listener.on('message', hear);
  listener.on('smessage', hear);
  try {
    const first = await behindAHeldRow(3, async () => {
      const response = postGift(key, donorId);
      // The same job delivered a second time, as after a worker that stalled.
      await waitFor(
        async () => (await activeWriteWithKey(queue, key)) !== undefined,
        5_000,
        'the write to reach the worker',
      );
      const { job, index } = (await activeWriteWithKey(queue, key))!;
      jobIds = [job.id!, `${job.id!}_again`];
      at = index;
      const { replyTo } = job.data as WriteBatch;
      await (listener.isCluster ? listener.ssubscribe(replyTo) : listener.subscribe(replyTo));
      await queue.add(WRITE_JOB, job.data, { jobId: jobIds[1] });
      return response;
    });

    // The client had the answer of whichever delivery finished first.
    expect(first.status).toBe(201);
    await waitFor(
      async () =>
        (await Promise.all(jobIds.map((id) => queue.getJob(id)))).every(
          (job) => job?.finishedOn !== undefined,
        ),
      5_000,
      'both deliveries to finish',
    );
    const requestId = first.headers.get('request-id');
    await waitFor(
      () => heard.filter((reply) => reply.requestId === requestId).length === 2,
      5_000,
      'both deliveries to answer',
    );
    const answers = heard.filter((reply) => reply.requestId === requestId);
    for (const answer of answers) {
      if (!('result' in answer) || !answer.result.ok)
        throw new Error(`a delivery was refused: ${JSON.stringify(answer)}`);
      expect(answer.result.body).toEqual(first.body);
    }
    expect(
      answers
        .map((answer) => 'result' in answer && answer.result.ok && answer.result.replayed)
        .sort(),
    ).toEqual([false, true]);
    // Each finished job keeps the write's status, not its body (common/queue.ts).
    const summaries = await Promise.all(
      jobIds.map(async (id) => ((await queue.getJob(id))!.returnvalue as WriteSummary[])[at]!),
    );
    expect(summaries.map(({ status }) => status)).toEqual([201, 201]);
    expect(summaries.filter((summary) => summary.replayed)).toHaveLength(1);
    for (const summary of summaries) expect(summary).not.toHaveProperty('body');
    // Nor does the queue's event stream, which repeats what each job returned.
    const reader = createRedis(redisTargetOf(service.config), 'blocking');
    const events = await reader
      .xrevrange(queue.keys.events!, '+', '-', 'COUNT', 500)
      .finally(() => reader.disconnect());
    const completed = events.filter(
      ([, fields]: [string, string[]]) =>
        fields.includes('completed') && jobIds.includes(fields[fields.indexOf('jobId') + 1]!),
    );
    expect(completed).toHaveLength(2);
    expect(JSON.stringify(completed)).not.toContain(key);
    expect(await giftsWithSubject(key)).toBe(1);
    expect(await receiptText(key)).toBe(JSON.stringify(first.body));
    expect(await count(sql.fragment`SELECT 1 FROM events WHERE data->>'subject' = ${key}`)).toBe(1);
  } finally {
    listener.disconnect();
  }
});

test('creates from two institutions at once never share a transaction: each institution has its own', async () => {
  const ours = Array.from({ length: 6 }, (_, index) => `mixed-ours-${index}`);
  const theirs = Array.from({ length: 6 }, (_, index) => `mixed-theirs-${index}`);
  // A held row in each institution: each one's creates gather behind its own first statement.
  const otherHeld = (await newDonor(service, other.key)).id;
  const responses = await behindAHeldRow(
    ours.length + theirs.length + 2,
    () =>
      Promise.all([
        ...ours.map((key) => postGift(key, donorId)),
        ...theirs.map((key) => postGift(key, otherDonorId, other.key)),
      ]),
    [{ donor: heldDonorId }, { donor: otherHeld, apiKey: other.key }],
  );
  expect(responses.map((response) => response.status)).toEqual(
    Array<number>(ours.length + theirs.length).fill(201),
  );

  // xmin: the transaction that wrote a row. A create writes its gift, its receipt and its event.
  const institutions = sql.join(
    [service.tenant.institutionId, other.institutionId],
    sql.fragment`, `,
  );
  const rows = await service.db.any(sql.type(
    z.object({ institution_id: z.number(), transaction: z.string() }),
  )`
    SELECT institution_id, xmin::text AS transaction FROM gifts
    WHERE institution_id IN (${institutions}) AND subject LIKE 'mixed-%'
    UNION ALL
    SELECT institution_id, xmin::text FROM write_receipts
    WHERE institution_id IN (${institutions}) AND key LIKE 'mixed-%'
    UNION ALL
    SELECT institution_id, xmin::text FROM events
    WHERE institution_id IN (${institutions}) AND data->>'subject' LIKE 'mixed-%'`);
  expect(rows).toHaveLength(3 * (ours.length + theirs.length));
  const transactionsOf = (institutionId: number) =>
    new Set(
      rows.filter((row) => row.institution_id === institutionId).map((row) => row.transaction),
    );
  const oursTransactions = transactionsOf(service.tenant.institutionId);
  const theirsTransactions = transactionsOf(other.institutionId);
  expect([...oursTransactions].filter((xid) => theirsTransactions.has(xid))).toEqual([]);
  // They were committed in groups all the same: fewer transactions than creates on each side.
  expect(oursTransactions.size).toBeLessThan(ours.length);
  expect(theirsTransactions.size).toBeLessThan(theirs.length);
});
