import { z } from 'zod';
import { DEFAULT_RANGE_READING } from './pagination/listPage.js';
import { DEFAULT_RETRY_SCHEDULE, DEFAULT_TIMEOUT_MS } from './webhooks/policy.js';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** A comma-separated list; empty or unset is none. */
const commaList = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  );

const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATABASE_URL: z.url(),
  /**
   * Optional: a direct connection to the same database for migrations (`npm run migrate`), whose
   * session advisory lock a transaction-mode pooler such as PgBouncer cannot keep. Unset:
   * DATABASE_URL.
   */
  DATABASE_MIGRATION_URL: z.url().optional(),
  /**
   * Optional: a read replica (or a pooler in front of one). Lists and retrievals (GET) read from
   * it; writes, dry runs and their checks stay on DATABASE_URL. Unset: everything on DATABASE_URL.
   */
  DATABASE_READ_URL: z.url().optional(),
  /** Required unless REDIS_CLUSTER_NODES is set (checked by `settingsSchema`). */
  REDIS_URL: z
    .url()
    .refine((url) => /^rediss?:\/\//.test(url), {
      message: 'must be a redis:// or rediss:// URL, such as redis://127.0.0.1:6379',
    })
    .optional(),
  /**
   * A Redis Cluster, as some of its nodes (`host:port,host:port`); when set, every Redis
   * connection goes to the cluster and REDIS_URL is not used.
   */
  REDIS_CLUSTER_NODES: commaList.pipe(
    z
      .array(
        z
          .string()
          .regex(/^[A-Za-z0-9.-]+:\d{1,5}$/, 'must be host:port pairs, comma-separated')
          .transform((node) => {
            const colon = node.lastIndexOf(':');
            return { host: node.slice(0, colon), port: Number(node.slice(colon + 1)) };
          }),
      )
      .max(100),
  ),
  /** The cluster nodes' ACL user (Redis 6+), with REDIS_CLUSTER_PASSWORD; unset: `default`. */
  REDIS_CLUSTER_USERNAME: z.string().min(1).optional(),
  /** The cluster nodes' password (`requirepass`, or the ACL user's). */
  REDIS_CLUSTER_PASSWORD: z.string().min(1).optional(),
  /**
   * `true`: every cluster node is reached over TLS, its certificate checked against Node's CAs
   * (add a private CA with NODE_EXTRA_CA_CERTS).
   */
  REDIS_CLUSTER_TLS: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default('false')
    .transform((value) => value === 'true'),
  /**
   * How many write queues the writes are spread over, by institution; every worker takes jobs
   * from all of them. More than one lets a Redis Cluster share the queue work among its masters.
   */
  WRITE_QUEUE_SHARDS: z.coerce.number().int().min(1).max(64).default(1),
  CURSOR_SECRET: z.string().min(32, 'must be at least 32 characters'),
  NODE_ENV: z.string().optional(),
  IDEMPOTENCY_TTL_SECONDS: positiveInt(86_400),
  /** How long events are kept (integration.md §1); the worker's maintenance prunes older ones. */
  EVENT_RETENTION_DAYS: positiveInt(90),
  /**
   * How long an import file's rows are kept (constituents.md §6): the bound on how long an
   * erasure has personal data in import files to reach. The worker's maintenance empties older
   * files.
   */
  IMPORT_FILE_RETENTION_DAYS: positiveInt(30),
  /** How long audit rows are kept (trust.md §3); the worker's maintenance prunes older ones. */
  AUDIT_RETENTION_DAYS: positiveInt(400),
  CURSOR_TTL_SECONDS: positiveInt(3_600),
  LIST_RANGE_WALK_ROWS: positiveInt(DEFAULT_RANGE_READING.walkRows),
  LIST_RANGE_SORT_ROWS: positiveInt(DEFAULT_RANGE_READING.sortRows),
  WRITE_TIMEOUT_MS: positiveInt(10_000),
  /**
   * Jobs a worker runs at once per write queue. The concurrent creates are what group commit
   * shares a statement among, so more of them cost Postgres less per write (bench:writes).
   */
  WORKER_CONCURRENCY: positiveInt(32),
  /**
   * How long a worker's hold on a job lasts unrenewed; a silent worker's jobs move on after it
   * (and a quarter of it more at most: common/queue.ts, stalledCheckIntervalMs). A live worker
   * renews its holds before half of it has passed, so only an event loop or Redis stalled for the
   * other half loses one.
   */
  WORKER_LOCK_DURATION_MS: positiveInt(8_000),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, "_", "." or "-" only')
    .default('dgm'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_POOL_SIZE: positiveInt(20),
  /**
   * `true`: the worker's group-commit statement is a named prepared statement, which Postgres
   * plans once per connection instead of on every execution. PgBouncer in transaction mode keeps
   * prepared statements only from 1.21 on, with max_prepared_statements above 0: behind an older
   * one the worker finds out at its first lost statement and sends them unnamed from then on
   * (common/db/preparedStatements.ts); `false` starts that way.
   */
  DATABASE_PREPARED_STATEMENTS: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default('true')
    .transform((value) => value === 'true'),
  /** Requests per second one API key may make to one API process; 0 turns the limit off. */
  RATE_LIMIT_PER_SECOND: z.coerce.number().int().min(0).default(100),
  /**
   * How long an API process may admit real writes on a key it confirmed, without asking Postgres
   * again (the worker confirms the key inside every write anyway); 0: every request asks.
   */
  API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(300).default(5),
  /**
   * Bearer token protecting GET /metrics on the API; required in production. Unset or empty
   * elsewhere: open.
   */
  METRICS_TOKEN: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.string().min(16, 'must be at least 16 characters').optional(),
  ),
  /**
   * The key that seals secrets at rest (common/secrets.ts): 32 bytes as 64 hex characters;
   * required in production. Unset or empty elsewhere: a development key derived from
   * CURSOR_SECRET, with a warning.
   */
  SECRETS_KEY: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 32 bytes as 64 hex characters (openssl rand -hex 32)')
      .optional(),
  ),
  /** The key before a rotation of SECRETS_KEY: it still opens what it sealed. */
  SECRETS_KEY_PREVIOUS: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 32 bytes as 64 hex characters (openssl rand -hex 32)')
      .optional(),
  ),
  /**
   * Optional operator token: when set, the queue dashboard is served at /admin/queues to callers
   * that present it (HTTP Basic password or `Authorization: Bearer`). Unset or empty: no dashboard.
   */
  ADMIN_TOKEN: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.string().min(16, 'must be at least 16 characters').optional(),
  ),
  /** Optional port on which a worker serves its own /metrics. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /**
   * Pins the service's calendar day (YYYY-MM-DD, UTC) for defaults and due dates: for tests, demos
   * and rehearsals of a month end. Unset: the real date.
   */
  /**
   * Hosts (`host` or `host:port`) that webhooks may reach over http and at any address, for
   * development and tests (integration.md §2). Unset: https to public addresses only.
   */
  WEBHOOK_ALLOWED_HOSTS: commaList.pipe(
    z.array(
      z
        .string()
        .regex(
          /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/,
          'must be host or host:port, comma-separated',
        ),
    ),
  ),
  /** Seconds before each webhook retry, comma-separated; the default spans about 3 days. */
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default(DEFAULT_RETRY_SCHEDULE.join(','))
    .transform((value) => value.split(',').map((item) => Number(item.trim())))
    .pipe(
      z
        .array(z.number().finite().nonnegative('must be seconds, such as 5,300,1800'))
        .min(1)
        .max(20),
    ),
  /** How long a webhook attempt waits for an answer (integration.md §2: 10 s); tests shorten it. */
  WEBHOOK_TIMEOUT_MS: positiveInt(DEFAULT_TIMEOUT_MS),
  /**
   * The most sends of one institution under way at once, over every worker (a worker runs 40):
   * a receiver that hangs holds this many, and other institutions' deliveries go on.
   */
  WEBHOOK_INSTITUTION_SENDS: positiveInt(20),
  /**
   * The longest a delivery waits, parked (delayed), for its institution's turn when no freed send
   * wakes it (a wake-up lost with a worker): long enough that thousands parked cost little to look
   * at again. Tests shorten it.
   */
  WEBHOOK_PARKED_MS: positiveInt(30_000),
  /** The largest import file (integration.md §3); a bigger upload is 413 and nothing is stored. */
  IMPORT_MAX_BYTES: positiveInt(50 * 1024 * 1024),
  /** The most data rows an import file may have. */
  IMPORT_MAX_ROWS: positiveInt(500_000),
  /** Rows per chunk: the unit of an import's transactions and jobs. */
  IMPORT_CHUNK_ROWS: positiveInt(500),
  /** Chunks one worker process judges or writes at once. */
  IMPORT_CONCURRENCY: positiveInt(2),
  /** Donors per transaction of a giving statement run: the work a killed worker may lose. */
  STATEMENT_RUN_BATCH: positiveInt(25),
  CLOCK_TODAY: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date written YYYY-MM-DD')
    .optional(),
});

/** The rules that span variables. */
const settingsSchema = configSchema.superRefine((config, context) => {
  if (!config.REDIS_URL && !config.REDIS_CLUSTER_NODES.length)
    context.addIssue({ code: 'custom', path: ['REDIS_URL'], message: 'is required' });
});

export type Config = z.infer<typeof configSchema>;

/** The sample secret of docker-compose.yml: fine for a try-out, never for production. */
export const SAMPLE_CURSOR_SECRET = 'change-me-to-32-or-more-random-characters';

export class ConfigError extends Error {}

/** Parses the environment; the first bad variable is reported by name in one line. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = settingsSchema.safeParse(env);
  if (result.success) {
    if (result.data.NODE_ENV === 'production' && result.data.CURSOR_SECRET === SAMPLE_CURSOR_SECRET)
      throw new ConfigError(
        'Invalid configuration: CURSOR_SECRET is the sample value of docker-compose.yml; in production set a secret of your own (openssl rand -hex 32).',
      );
    const missing = missingInProduction(result.data);
    if (missing.length)
      throw new ConfigError(
        `Invalid configuration: NODE_ENV=production needs ${missing.join(', ')} (16+ characters for the tokens, 64 hex characters for SECRETS_KEY: openssl rand -hex 32).`,
      );
    return result.data;
  }
  const issue = result.error.issues[0];
  const name = String(issue?.path[0] ?? 'environment');
  const value = env[name];
  const problem = value === undefined || value === '' ? 'is required' : issue?.message;
  throw new ConfigError(`Invalid configuration: ${name} ${problem}`);
}

/**
 * What production may not run without (trust.md §4): tokens in front of /metrics and the queue
 * board, which would otherwise be open or absent, and the key that seals secrets at rest, which
 * elsewhere is derived from CURSOR_SECRET. All that is missing is named at once.
 */
function missingInProduction(config: Config): string[] {
  if (config.NODE_ENV !== 'production') return [];
  return (['METRICS_TOKEN', 'ADMIN_TOKEN', 'SECRETS_KEY'] as const).filter((name) => !config[name]);
}

/** Entry points call this: a bad environment stops the process with one clear line. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
