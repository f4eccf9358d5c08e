import { createHash } from 'node:crypto';
import { DelayedError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { DatabasePool } from 'slonik';
import type { Logger } from '../common/logger.js';
import type { Redis } from '../common/redis.js';
import type { WorkerMetrics } from '../common/metrics.js';
import {
  dispatchEvents,
  orphanedDeliveries,
  type DeliveryRef,
} from '../common/webhooks/dispatch.js';
import { recordAttempts, type AttemptOutcome } from '../common/webhooks/attempts.js';
import { disableGoneEndpoint } from '../common/webhooks/health.js';
import { deliveryTimeoutMs, retrySchedule } from '../common/webhooks/policy.js';
import {
  createDeliveryQueue,
  DELIVER_JOB,
  deliveryQueueLocation,
  enqueueDeliveries,
} from '../common/webhooks/queue.js';
import { queueRequestedRetries } from '../common/webhooks/retries.js';
import { sendWebhook, signatures, type Attempt } from '../common/webhooks/send.js';
import { institutionSlots, SlotWaiters, type InstitutionSlots } from '../common/webhooks/slots.js';
import { deliveryTargets, type DeliveryTarget } from '../common/webhooks/targets.js';
import { Batches } from './batches.js';
import { closeWorker } from '../common/shutdown.js';
import { stalledCheckIntervalMs } from '../common/queue.js';

/** How often each worker looks for events not yet dispatched. */
const DISPATCH_EVERY_MS = 250;
const DELIVERY_CONCURRENCY = 40;
/**
 * The wait before retry `attempt` (1 for the first retry): the schedule's, give or take 20%.
 * The jitter is drawn from the job and attempt, so the row's `next_attempt_at` and the queue's
 * delay agree, while retries of different deliveries spread out.
 */
function retryDelayMs(jobId: string, attempt: number): number {
  const schedule = retrySchedule();
  const base = schedule[Math.min(attempt, schedule.length) - 1] ?? 0;
  const draw = createHash('sha256').update(`${jobId}:${attempt}`).digest().readUInt32BE(0);
  return Math.round(base * 1000 * (0.8 + 0.4 * (draw / 0xffffffff)));
}

/** One statement per batch of concurrent deliveries, for their reads and for their outcomes. */
interface DeliveryStatements {
  targets: Batches<DeliveryRef, DeliveryTarget | null>;
  outcomes: Batches<AttemptOutcome, void>;
}

const deliveryStatements = (pool: DatabasePool): DeliveryStatements => ({
  targets: new Batches({
    run: (deliveries) => deliveryTargets(pool, deliveries),
    groupOf: (delivery) => delivery.institutionId,
  }),
  outcomes: new Batches({
    run: async (outcomes) => {
      await recordAttempts(pool, outcomes);
      return outcomes.map(() => undefined);
    },
    groupOf: (outcome) => outcome.delivery.institutionId,
    // Two attempts of one delivery (a retry asked for while a scheduled one runs) are recorded
    // one after the other, each counted.
    identityOf: (outcome) => outcome.delivery.deliveryId,
  }),
});

/**
 * One attempt of one delivery; throws to have the queue retry it on the schedule. The job
 * completes only once its attempt is recorded: a worker that dies before has the job run again,
 * which sends again with the same webhook-id (at least once).
 */
async function deliver(
  pool: DatabasePool,
  statements: DeliveryStatements,
  job: Job<DeliveryRef>,
  metrics?: WorkerMetrics,
): Promise<void> {
  const found = await statements.targets.submit(job.data);
  // Gone with its endpoint, or settled already (a job run again after its worker died).
  if (!found || found.status !== 'pending') return;
  const attempt = job.attemptsMade + 1;
  const last = attempt >= (job.opts.attempts ?? 1);
  let outcome: Attempt;
  const startedAt = new Date();
  if (found.endpointStatus !== 'enabled') {
    outcome = { statusCode: null, error: 'the endpoint is disabled', durationMs: 0 };
  } else if (!found.event) {
    outcome = { statusCode: null, error: 'the event is past its retention', durationMs: 0 };
  } else {
    const body = JSON.stringify(found.event);
    // Whole seconds: the header carries unix seconds and the signature covers the header.
    const timestamp = new Date(Math.floor(Date.now() / 1000) * 1000);
    outcome = await sendWebhook(
      found.url,
      {
        'webhook-id': found.eventId,
        'webhook-timestamp': String(timestamp.getTime() / 1000),
        'webhook-signature': signatures(found.secrets, found.eventId, timestamp, body),
      },
      body,
    );
  }
  const delivered = outcome.error === null;
  const gone = outcome.statusCode === 410;
  const final = delivered || gone || last || found.endpointStatus !== 'enabled';
  const recorded: AttemptOutcome = {
    delivery: job.data,
    startedAt,
    attempt: outcome,
    status: delivered ? 'delivered' : final ? 'failed' : 'pending',
    nextAttemptAt: final ? null : new Date(Date.now() + retryDelayMs(String(job.id), attempt)),
  };
  if (gone)
    // Rare: the endpoint is disabled, with its event, in the transaction recording the attempt.
    await pool.transaction(async (tx) => {
      await recordAttempts(tx, [recorded]);
      await disableGoneEndpoint(tx, job.data.institutionId, found.endpointId);
    });
  else await statements.outcomes.submit(recorded);
  // A send asked for by hand never gives a delivery up: its schedule, if any, stays (attempts.ts).
  const gaveUp = final && !delivered && job.data.manual !== true;
  metrics?.webhookDeliveries.inc({
    outcome: delivered ? 'delivered' : gaveUp ? 'gave_up' : 'failed_attempt',
  });
  if (!final) throw new Error(outcome.error ?? 'not delivered');
}

/**
 * How long a delivery fetched while its institution's slots are all taken waits in this process
 * for one before it is parked, looking again every RETAKE_EVERY_MS and whenever this process frees
 * one. A receiver that answers frees a slot well within it, so the deliveries of a busy
 * institution go out one after another instead of each being parked and woken (which cost twice
 * the CPU per delivery and half the rate of a burst); a receiver that hangs frees none, so they
 * are parked after it and the deliveries of other institutions behind them are reached.
 */
const WAIT_FOR_SLOT_MS = 250;
const RETAKE_EVERY_MS = 50;

/** What this process's deliveries take turns by. */
interface Turns {
  slots: InstitutionSlots;
  waiters: SlotWaiters;
  /** How long a delivery that found no slot is parked (WEBHOOK_PARKED_MS). */
  parkedForMs: number;
  logger: Logger;
}

/**
 * Runs the job's attempt in one of its institution's slots, or parks the job until a slot frees
 * (no attempt is counted, the job keeps its id and its retries).
 */
async function inTurn(
  turns: Turns,
  job: Job<DeliveryRef>,
  token: string | undefined,
  attempt: () => Promise<void>,
): Promise<void> {
  const { slots, waiters, logger } = turns;
  const { institutionId } = job.data;
  const jobId = String(job.id);
  const parkAt = Date.now() + WAIT_FOR_SLOT_MS;
  let taken = await slots.take(institutionId, jobId, false);
  while (!taken && Date.now() < parkAt) {
    await waiters.wait(institutionId, Math.min(RETAKE_EVERY_MS, parkAt - Date.now()));
    taken = await slots.take(institutionId, jobId, Date.now() >= parkAt);
  }
  if (!taken) {
    await job.moveToDelayed(Date.now() + turns.parkedForMs, token);
    // A slot freed between the refusal and the move had no delayed job to wake: look once more.
    if (await slots.hasRoom(institutionId))
      await job.promote().catch(() => {
        // Woken meanwhile by a freed slot: it is waiting already.
      });
    throw new DelayedError();
  }
  try {
    await attempt();
  } finally {
    // The attempt's outcome stands whatever happens here: a slot not freed lapses with its lease.
    // A delivery of this process waiting for the slot takes it; else a parked one is woken.
    const handedOn = waiters.has(institutionId);
    await slots
      .free(institutionId, jobId, !handedOn)
      .catch((error: unknown) => logger.warn({ err: error }, 'webhook slot not freed'));
    if (handedOn) waiters.wake(institutionId);
  }
}

/**
 * The worker's webhook side: a dispatcher that turns committed events into deliveries, and the
 * consumer of the delivery queue, which gives each institution at most `perInstitution` of the
 * sends under way at once, across every worker.
 */
export async function startWebhooks(
  pool: DatabasePool,
  connection: ConnectionOptions,
  queuePrefix: string,
  logger: Logger,
  options: { lockDurationMs: number; perInstitution: number; parkedForMs: number; redis: Redis },
  metrics?: WorkerMetrics,
) {
  const { lockDurationMs } = options;
  const queue = createDeliveryQueue(connection, queuePrefix);
  const { name, prefix } = deliveryQueueLocation(queuePrefix);
  const statements = deliveryStatements(pool);
  const { parkedForMs } = options;
  const turns: Turns = {
    slots: institutionSlots(options.redis, queue, {
      limit: options.perInstitution,
      // Longer than an attempt (its send's timeout, its reads and its record) takes.
      leaseMs: deliveryTimeoutMs() + lockDurationMs,
      parkedForMs,
    }),
    waiters: new SlotWaiters(),
    parkedForMs,
    logger,
  };
  queue.on('error', (error) => logger.warn({ err: error }, 'webhook queue connection error'));
  const worker = new Worker<DeliveryRef, void, typeof DELIVER_JOB>(
    name,
    (job, token) => inTurn(turns, job, token, () => deliver(pool, statements, job, metrics)),
    {
      connection,
      prefix,
      concurrency: DELIVERY_CONCURRENCY,
      // As for writes (worker/worker.ts): a dead worker's deliveries move to another after the
      // lock duration, not after BullMQ's default 30 s plus its check interval; a job run again
      // finds its delivery settled, or sends it again (at least once, same webhook-id).
      lockDuration: lockDurationMs,
      stalledInterval: stalledCheckIntervalMs(lockDurationMs),
      maxStalledCount: 5,
      settings: {
        backoffStrategy: (attemptsMade, _type, _error, job) =>
          retryDelayMs(String(job?.id), attemptsMade),
      },
    },
  );
  worker.on('error', (error) => logger.warn({ err: error }, 'webhook worker connection error'));
  await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);

  let stopped = false;
  let sweptAt = 0;
  const dispatchOnce = async () => {
    for (;;) {
      const { batchSize, deliveries } = await dispatchEvents(pool);
      await enqueueDeliveries(queue, deliveries);
      if (batchSize < 500 || stopped) break;
    }
    await queueRequestedRetries(pool, queue);
    if (Date.now() - sweptAt > 60_000) {
      sweptAt = Date.now();
      await enqueueDeliveries(queue, await orphanedDeliveries(pool));
    }
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        await dispatchOnce();
      } catch (error) {
        logger.warn({ err: error }, 'webhook dispatch failed; trying again');
      }
      await new Promise((resolve) => setTimeout(resolve, DISPATCH_EVERY_MS));
    }
  })();

  return {
    async close() {
      stopped = true;
      await loop;
      await closeWorker(worker, logger);
      await queue.close();
    },
  };
}
