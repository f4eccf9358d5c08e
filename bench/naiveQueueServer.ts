/**
 * The write benchmark's second baseline: the queue as a tutorial would write it. An Express
 * handler adds a BullMQ job and waits for it with `job.waitUntilFinished` (QueueEvents); a
 * BullMQ worker inserts the gift row with pg. No auth, validation, idempotency or events.
 * Run by bench/writes.ts as two processes: BENCH_ROLE=api and BENCH_ROLE=worker.
 */
import { Queue, QueueEvents, Worker } from 'bullmq';
import express from 'express';
import pg from 'pg';

interface GiftBody {
  donor_id: number;
  amount: number;
  subject: string;
  gift_date: string;
}

const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const connection = { host: redisUrl.hostname, port: Number(redisUrl.port || 6379) };
const prefix = process.env.QUEUE_PREFIX ?? 'naive';
const queueName = 'naive-writes';

if (process.env.BENCH_ROLE === 'worker') {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 18 });
  const institutionId = Number(process.env.BENCH_INSTITUTION_ID);
  const worker = new Worker<GiftBody, { id: number }>(
    queueName,
    async (job) => {
      const body = job.data;
      const { rows } = await pool.query<{ id: number }>(
        `INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type)
         VALUES ($1, $2, $3, 'USD', $4, $5, 'cash') RETURNING id`,
        [institutionId, body.donor_id, body.amount, body.subject, body.gift_date],
      );
      return { id: Number(rows[0]!.id) };
    },
    { connection, prefix, concurrency: 16 },
  );
  process.on(
    'SIGTERM',
    () => void worker.close().then(() => pool.end().then(() => process.exit(0))),
  );
} else {
  const queue = new Queue<GiftBody, { id: number }>(queueName, {
    connection,
    prefix,
    // Kept a while: a job removed at once could be gone before its waiter asks whether it ended.
    defaultJobOptions: { removeOnComplete: { age: 300 }, removeOnFail: { age: 300 } },
  });
  queue.setMaxListeners(0);
  const events = new QueueEvents(queueName, { connection, prefix });
  events.setMaxListeners(0);
  const app = express();
  app.use(express.json());
  app.post('/gifts', async (req, res) => {
    const job = await queue.add('gift', req.body as GiftBody);
    const result = await job.waitUntilFinished(events, 30_000);
    res.status(201).json(result);
  });
  const server = app.listen(Number(process.env.PORT));
  process.on('SIGTERM', () =>
    server.close(
      () => void Promise.all([queue.close(), events.close()]).then(() => process.exit(0)),
    ),
  );
}
