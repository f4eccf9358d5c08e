import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DatabasePool } from 'slonik';
import { outboxLagSeconds } from './webhooks/dispatch.js';

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Database pool use, read when Prometheus scrapes. */
function poolGauges(registry: Registry, pool: DatabasePool): void {
  new Gauge({
    name: 'db_pool_connections',
    help: 'Postgres pool connections by state.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const state = pool.state();
      this.set({ state: 'acquired' }, state.acquiredConnections);
      this.set({ state: 'idle' }, state.idleConnections);
      this.set({ state: 'pending' }, state.pendingConnections);
      this.set({ state: 'waiting_clients' }, state.waitingClients);
    },
  });
}

export type QueueCounts = () => Promise<Record<string, number>>;

/**
 * The webhook side, read when Prometheus scrapes: how far the dispatcher is behind the outbox,
 * and the deliveries waiting in the webhooks queue.
 */
function webhookGauges(registry: Registry, pool: DatabasePool, webhookQueueCounts: QueueCounts) {
  new Gauge({
    name: 'webhook_outbox_lag_seconds',
    help: 'Age of the oldest committed event not yet dispatched to webhook endpoints (0 when none).',
    registers: [registry],
    async collect() {
      const lag = await outboxLagSeconds(pool).catch(() => null);
      if (lag !== null) this.set(lag);
    },
  });
  new Gauge({
    name: 'webhook_queue_jobs',
    help: 'Webhook delivery jobs waiting to be sent now (waiting) or later (delayed: retries).',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await webhookQueueCounts().catch(() => ({}) as Record<string, number>);
      for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
    },
  });
}

/** What the API process reports at GET /metrics. */
export function createApiMetrics(
  pool: DatabasePool,
  queueCounts: QueueCounts,
  webhookQueueCounts: QueueCounts,
) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  poolGauges(registry, pool);
  webhookGauges(registry, pool, webhookQueueCounts);
  new Gauge({
    name: 'write_queue_jobs',
    help: 'Write jobs in the queue by state.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await queueCounts().catch(() => ({}) as Record<string, number>);
      for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
    },
  });
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    writesPerJob: new Histogram({
      name: 'write_job_writes',
      help: 'Writes per write job this API process queued: the real writes it received in one turn of its event loop, for one shard (at most 64).',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers: [registry],
    }),
    idempotency: new Counter({
      name: 'idempotency_outcomes_total',
      help: 'Writes with an Idempotency-Key that were replayed, in flight (409) or mismatched (422).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
export type ApiMetrics = ReturnType<typeof createApiMetrics>;

/** What a worker process reports (on METRICS_PORT when set). */
export function createWorkerMetrics(pool: DatabasePool) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  poolGauges(registry, pool);
  return {
    registry,
    jobWait: new Histogram({
      name: 'write_job_wait_seconds',
      help: 'Time a write waited in the queue before a worker took its job, by command.',
      labelNames: ['command'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    jobRun: new Histogram({
      name: 'write_job_run_seconds',
      help: 'Time a worker spent on a write, by command and result status.',
      labelNames: ['command', 'status'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by outcome: delivered, failed_attempt (to be retried) or gave_up (failed for good: retries spent, 410 Gone, endpoint disabled).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    importRows: new Counter({
      name: 'import_rows_total',
      help: 'Import rows done by this worker, counted as their chunk commits: by phase (validate: judged; import: written) and outcome (succeeded, skipped or failed).',
      labelNames: ['phase', 'outcome'],
      registers: [registry],
    }),
    createsPerStatement: new Histogram({
      name: 'write_creates_per_statement',
      help: 'Creates committed together in one statement (group commit), per statement.',
      buckets: [1, 2, 4, 8, 16, 32],
      registers: [registry],
    }),
  };
}
export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;
