import { Worker, type ConnectionOptions, type Job } from 'bullmq';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import {
  finishImporting,
  finishValidating,
  pendingChunks,
  purgeUnclaimedFiles,
  runChunk,
  startValidating,
  writesInOrder,
  type Phase,
} from '../common/imports/chunks.js';
import { findImport } from '../common/imports/queries.js';
import { createImportQueue, IMPORT_QUEUE, importsToAdvance } from '../common/imports/queue.js';
import { runningStatuses, type ImportRow } from '../common/imports/schema.js';
import type { Logger } from '../common/logger.js';
import type { WorkerMetrics } from '../common/metrics.js';
import { queueLocation } from '../common/queueShards.js';
import { stalledCheckIntervalMs } from '../common/queue.js';
import { closeWorker } from '../common/shutdown.js';

/** The advisory lock key of the sweep (any constant the service uses for nothing else). */
const SWEEP_LOCK = 7_341_201;
const CHUNK_JOB = 'chunk';

/** How often the sweep looks for imports to move on; the longest an import waits for a step. */
const SWEEP_EVERY_MS = 500;
/** Chunks queued per import and sweep: enough to keep every worker busy until the next sweep. */
const CHUNKS_PER_SWEEP = 64;

interface ChunkRef {
  institutionId: number;
  importId: number;
  chunk: number;
  phase: Phase;
}

/**
 * Imports on the workers (integration.md §3). Nothing about an import's progress lives in Redis:
 * a sweep, run by one worker at a time, reads the running imports (a few per institution, in
 * turns across institutions: importsToAdvance) from PostgreSQL and queues a job per chunk still to do, under an id made of the import, phase
 * and chunk (a chunk already queued is not queued twice). Jobs lost with Redis, or held by a
 * worker that died, are queued again by a later sweep or run again by BullMQ; the chunk's done
 * mark, committed with its rows, makes either a no-op once the chunk is done.
 */
export async function startImports(
  pool: DatabasePool,
  connection: ConnectionOptions,
  queuePrefix: string,
  logger: Logger,
  metrics: Pick<WorkerMetrics, 'importRows'>,
  options: { concurrency: number; lockDurationMs: number },
) {
  const queue = createImportQueue(connection, queuePrefix);
  const { prefix } = queueLocation(queuePrefix, IMPORT_QUEUE);
  queue.on('error', (error) => logger.warn({ err: error }, 'imports queue connection error'));

  const chunkJobs = (ref: Omit<ChunkRef, 'chunk'>, chunks: number[]) =>
    chunks.map((chunk) => ({
      name: CHUNK_JOB,
      data: { ...ref, chunk } satisfies ChunkRef,
      opts: {
        jobId: `import-${ref.institutionId}-${ref.importId}-${ref.phase}-${chunk}`,
        attempts: 5,
        backoff: { type: 'exponential', delay: 500 },
        // Gone once done or given up, so that a later sweep may queue the chunk again if it is
        // still not done (its done mark, not the job, is the truth).
        removeOnComplete: true,
        removeOnFail: true,
      },
    }));

  /** One step of one running import: queue its pending chunks, or finish its phase. */
  const advance = async (imp: ImportRow) => {
    if (imp.status === 'queued') await startValidating(pool, imp);
    const phase: Phase = imp.status === 'importing' ? 'write' : 'judge';
    // In order: the next chunk only once the one before is written (its first pending one is
    // the one in flight, already queued under its id).
    const inOrder = phase === 'write' && (await writesInOrder(pool, imp));
    const pending = await pendingChunks(pool, imp, inOrder ? 1 : CHUNKS_PER_SWEEP);
    if (pending.length) {
      const ref = { institutionId: imp.institution_id, importId: imp.id, phase };
      await queue.addBulk(chunkJobs(ref, pending));
    } else if (phase === 'judge') await finishValidating(pool, imp);
    else await finishImporting(pool, imp);
  };

  const sweep = async () => {
    for (const imp of await importsToAdvance(pool, 100)) {
      // One import's trouble must not hold up the others.
      try {
        await advance(imp);
      } catch (error) {
        logger.error({ err: error, importId: imp.id }, 'import sweep step failed');
      }
    }
    const purged = await purgeUnclaimedFiles(pool);
    if (purged) logger.info({ purged }, 'unclaimed import files deleted');
  };

  /**
   * A chunk done: when it was its phase's last, the import moves on now rather than at the next
   * sweep (and the chunks of its next phase are queued at once); a file written in order has its
   * next chunk queued now.
   */
  const afterChunk = async (ref: ChunkRef) => {
    const imp = await findImport(pool, ref.institutionId, ref.importId);
    if (!imp || !runningStatuses.includes(imp.status)) return;
    const inOrder = imp.status === 'importing' && (await writesInOrder(pool, imp));
    if (!inOrder && (await pendingChunks(pool, imp, 1)).length) return;
    await advance(imp);
    const next = await findImport(pool, ref.institutionId, ref.importId);
    if (next?.status === 'importing') await advance(next);
  };

  // Every worker sweeps on its own clock, one at a time across the workers (a PostgreSQL advisory
  // lock): the sweep needs nothing from Redis, so a Redis that lost everything loses no import.
  let sweeping: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = whileLocked(pool, SWEEP_LOCK, sweep)
      .catch((error: unknown) => logger.warn({ err: error }, 'import sweep failed'))
      .finally(() => (sweeping = null));
  }, SWEEP_EVERY_MS);
  timer.unref();

  const worker = new Worker(
    IMPORT_QUEUE,
    async (job: Job<ChunkRef>) => {
      const tally = await runChunk(pool, job.data);
      if (tally) {
        const phase = job.data.phase === 'judge' ? 'validate' : 'import';
        for (const [outcome, rows] of Object.entries(tally))
          if (rows) metrics.importRows.inc({ phase, outcome }, rows);
      }
      await afterChunk(job.data);
    },
    {
      connection,
      prefix,
      concurrency: options.concurrency,
      // A chunk held by a worker that died goes to another after this, as writes do.
      lockDuration: options.lockDurationMs,
      stalledInterval: stalledCheckIntervalMs(options.lockDurationMs),
      maxStalledCount: 5,
    },
  );
  worker.on('error', (error) => logger.warn({ err: error }, 'imports worker connection error'));
  worker.on('failed', (job, error) =>
    logger.error({ err: error, jobId: job?.id }, 'import job failed'),
  );
  return {
    async close() {
      clearInterval(timer);
      await sweeping;
      await closeWorker(worker, logger);
      await queue.close();
    },
  };
}

/**
 * Runs `run` if this process takes the advisory lock `key`, else does nothing. The lock is
 * transaction-scoped, held by a transaction kept open while `run` works on other connections:
 * a session lock would not survive PgBouncer in transaction mode (its unlock could reach another
 * server connection). `run` is called outside the holding transaction's callback, since slonik
 * refuses the pool's queries inside it.
 */
async function whileLocked(pool: DatabasePool, key: number, run: () => Promise<void>) {
  const release = Promise.withResolvers<void>();
  const taken = Promise.withResolvers<boolean>();
  const holder = pool.transaction(async (transaction) => {
    taken.resolve(
      await transaction.oneFirst(sql.type(z.object({ locked: z.boolean() }))`
        SELECT pg_try_advisory_xact_lock(${key}) AS locked`),
    );
    await release.promise;
  });
  try {
    // A holder that failed before answering has no lock.
    if (await Promise.race([taken.promise, holder.then(() => false)])) await run();
  } finally {
    release.resolve();
    await holder;
  }
}
