// An import under worker crashes (integration.md §3): workers killed with SIGKILL while they
// judge and while they write chunks; afterwards every valid row is written exactly once, with
// exactly one event each, and every invalid row is reported once.
import { sql } from 'slonik';
import { z } from 'zod';
import { settled, upload, type ImportBody } from '../helpers/imports.js';
import { waitFor } from '../helpers/wait.js';
import { createRedis } from '../../common/redis.js';
import { RedisServer } from '../helpers/processes.js';
import { startRig, type Rig } from './faultKit.js';

const ROWS = 3_000;
/** Every 25th row names no donor: 120 invalid rows. */
const invalid = (index: number) => index % 25 === 0;

const giftsCsv = (donorId: number) =>
  `donor_id,amount,gift_date,subject\n${Array.from({ length: ROWS }, (_, index) =>
    invalid(index)
      ? `,10.00,2026-03-01,Row ${index + 2}`
      : `${donorId},10.00,2026-03-01,Row ${index + 2}`,
  ).join('\n')}\n`;

/** The gifts the rows made, by subject: each valid row's once. */
const expectedSubjects = () =>
  Array.from({ length: ROWS }, (_, index) => index)
    .filter((index) => !invalid(index))
    .map((index) => `Row ${index + 2}`)
    .sort();

describe('workers killed with SIGKILL mid-import, then restarted', () => {
  let rig: Rig;
  let done: ImportBody;
  const phasesAtKill: string[] = [];

  beforeAll(async () => {
    rig = await startRig({
      workers: 2,
      env: { WORKER_LOCK_DURATION_MS: '2000', IMPORT_CHUNK_ROWS: '40' },
    });
    const answer = await upload(rig.service, 'resource=gifts', giftsCsv(rig.donorId));
    expect(answer.status).toBe(202);
    const id = answer.body.id;
    const progress = async () =>
      (await rig.service.call<ImportBody>('GET', `/api/v1/imports/${id}`)).body;

    // Once while judging, once while writing: each kill lands with chunks in flight.
    for (const phase of ['validating', 'importing']) {
      await waitFor(
        async () => {
          const now = await progress();
          return now.status === phase && now.rows_processed >= 200;
        },
        60_000,
        `the import ${phase}`,
      );
      phasesAtKill.push((await progress()).status);
      await rig.kill(rig.workers.shift()!);
      await rig.startWorker();
    }
    done = await settled(rig.service, id, undefined, 90_000);
  }, 240_000);

  afterAll(async () => {
    await rig?.close();
  });

  test('the kills landed while judging and while writing', () => {
    expect(phasesAtKill).toEqual(['validating', 'importing']);
  });

  test('the import completed with every row accounted for', () => {
    expect(done).toMatchObject({
      status: 'completed',
      rows_total: ROWS,
      rows_processed: ROWS,
      rows_failed: ROWS / 25,
      rows_succeeded: ROWS - ROWS / 25,
    });
  });

  test('every valid row is one gift, and no row is two', async () => {
    const subjects = await rig.service.db.anyFirst(sql.type(z.object({ subject: z.string() }))`
      SELECT subject FROM gifts WHERE subject LIKE 'Row %' ORDER BY subject`);
    expect(subjects).toEqual(expectedSubjects());
  });

  test('every gift has exactly one gift.created event; the import one import.completed', async () => {
    const perGift = await rig.service.db.oneFirst(sql.type(z.object({ bad: z.number() }))`
      SELECT count(*)::int AS bad FROM gifts g
      WHERE g.subject LIKE 'Row %'
        AND (SELECT count(*) FROM events e
             WHERE e.institution_id = g.institution_id AND e.type = 'gift.created'
               AND e.object_id = g.id) <> 1`);
    expect(perGift).toBe(0);
    const completed = await rig.service.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      SELECT count(*)::int AS count FROM events WHERE type = 'import.completed'`);
    expect(completed).toBe(1);
  });

  test('every invalid row is reported once', async () => {
    const rows = await rig.service.db.anyFirst(sql.type(z.object({ row_number: z.number() }))`
      SELECT row_number FROM import_row_errors ORDER BY row_number`);
    expect(rows).toEqual(
      Array.from({ length: ROWS }, (_, index) => index)
        .filter(invalid)
        .map((index) => index + 2),
    );
  });

  test('no process died unasked', () => {
    expect(rig.crashes).toEqual([]);
  });
});

describe('Redis killed and restarted empty, and the API killed, mid-import', () => {
  let redis: RedisServer;
  let rig: Rig;
  let done: ImportBody;

  beforeAll(async () => {
    redis = await RedisServer.start();
    rig = await startRig({
      workers: 2,
      superviseApi: true,
      env: { REDIS_URL: redis.url, WORKER_LOCK_DURATION_MS: '2000', IMPORT_CHUNK_ROWS: '40' },
    });
    const answer = await upload(rig.service, 'resource=gifts', giftsCsv(rig.donorId));
    expect(answer.status).toBe(202);
    const id = answer.body.id;
    await waitFor(
      async () => {
        const now = await rig.service.db.oneFirst(sql.type(z.object({ count: z.number() }))`
          SELECT count(*)::int AS count FROM import_chunks WHERE imported_at IS NOT NULL`);
        return now >= 5;
      },
      60_000,
      'chunks written',
    );
    // Everything Redis held is gone: queued and active chunk jobs, locks, the queue itself.
    await redis.kill();
    await rig.kill(rig.api);
    await redis.restart();
    const wipe = createRedis(redis.url, 'blocking');
    await wipe.flushall();
    wipe.disconnect();
    await rig.startApi();
    done = await settled(rig.service, id, undefined, 90_000);
  }, 240_000);

  afterAll(async () => {
    await rig?.close();
    await redis?.stop();
  });

  test('the import completed, every valid row written once with one event', async () => {
    expect(done).toMatchObject({
      status: 'completed',
      rows_processed: ROWS,
      rows_failed: ROWS / 25,
      rows_succeeded: ROWS - ROWS / 25,
    });
    const subjects = await rig.service.db.anyFirst(sql.type(z.object({ subject: z.string() }))`
      SELECT subject FROM gifts WHERE subject LIKE 'Row %' ORDER BY subject`);
    expect(subjects).toEqual(expectedSubjects());
    const events = await rig.service.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      SELECT count(*)::int AS count FROM events WHERE type = 'gift.created'`);
    expect(events).toBe(ROWS - ROWS / 25);
  });
});
