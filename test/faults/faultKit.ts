/**
 * Shared machinery of the fault-injection suite (`npm run test:faults`): the API and workers as
 * real processes against a test service's database, a stream of gift creates from clients that
 * retry as real clients do, and the checks every fault must pass afterwards.
 */
import type { Queue } from 'bullmq';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { startTestService, type ServiceOptions, type TestService } from '../helpers/harness.js';
import {
  configEnv,
  freePort,
  killProcess,
  spawnEntry,
  waitForLog,
  type ServiceProcess,
} from '../helpers/processes.js';
import { sleep } from '../helpers/wait.js';
import { activeWrites } from '../helpers/writeQueue.js';

export { holdDonorRow } from '../helpers/rowLock.js';

export const WRITE_TIMEOUT_MS = 2_000;
/** How long a request may take at most: the write timeout plus a second. */
export const HANG_LIMIT_MS = WRITE_TIMEOUT_MS + 1_000;
/** After the fault ends, a fresh write must succeed within this. */
export const RECOVERY_LIMIT_MS = 5_000;

export interface Attempt {
  key: string;
  /** Date.now() when the request was sent. */
  at: number;
  ms: number;
  /** HTTP status, or null for a connection error (refused, reset, aborted). */
  status: number | null;
  code?: string;
  error?: string;
  /** The answer carried Idempotent-Replayed: true. */
  replayed?: boolean;
  requestId?: string;
  /** For a 5xx: the error the API logged for this request (matched by request id). */
  cause?: string;
}

export interface KeyResult {
  key: string;
  /** The final status: a 2xx, a 4xx other than 409, or whatever came last when the client gave up. */
  status: number | null;
  giftId: number | null;
  attempts: number;
  gaveUp: boolean;
  /** The logged cause of the last answer, when that was a 5xx. */
  cause?: string;
}

const RETRIED = new Set([409, 503, 504]);

/**
 * Clients creating gifts, one Idempotency-Key per gift, each retrying the same key and body after
 * 409, 503, 504 or a connection error with a short backoff until a 2xx or a 4xx, or until it
 * gives up after `giveUpAfterMs`.
 */
export class GiftStream {
  readonly attempts: Attempt[] = [];
  readonly results = new Map<string, KeyResult>();
  private running = false;
  private loops: Promise<void>[] = [];
  private issued = 0;

  constructor(
    private readonly options: {
      url: string;
      apiKey: string;
      donorId: number;
      clients: number;
      label: string;
      giveUpAfterMs?: number;
    },
  ) {}

  start(): void {
    this.running = true;
    for (let client = 0; client < this.options.clients; client += 1) {
      this.loops.push(
        (async () => {
          while (this.running) await this.write(this.nextKey());
        })(),
      );
    }
  }

  /** Stops issuing new keys and waits until every key in flight has its outcome. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.loops = [];
  }

  nextKey(): string {
    this.issued += 1;
    return `${this.options.label}-${this.issued}`;
  }

  get acknowledged(): number {
    let count = 0;
    for (const result of this.results.values()) if (isSuccess(result.status)) count += 1;
    return count;
  }

  /** Waits until `count` more keys than now have been acknowledged. */
  async progress(count: number, timeoutMs = 15_000): Promise<void> {
    const target = this.acknowledged + count;
    const deadline = Date.now() + timeoutMs;
    while (this.acknowledged < target) {
      if (Date.now() > deadline)
        throw new Error(`the stream made no progress: ${this.acknowledged}/${target}`);
      await sleep(20);
    }
  }

  /** One gift under one key, retried until it has an outcome. */
  async write(key: string): Promise<KeyResult> {
    const begun = Date.now();
    const giveUpAfter = this.options.giveUpAfterMs ?? 30_000;
    const result: KeyResult = { key, status: null, giftId: null, attempts: 0, gaveUp: false };
    this.results.set(key, result);
    for (;;) {
      const { attempt, id } = await this.send(key);
      result.attempts += 1;
      result.status = attempt.status;
      if (attempt.status !== null && !RETRIED.has(attempt.status)) {
        result.giftId = id;
        return result;
      }
      if (Date.now() - begun > giveUpAfter) {
        result.gaveUp = true;
        return result;
      }
      await sleep(Math.min(50 * result.attempts, 300) + Math.random() * 50);
    }
  }

  private async send(key: string): Promise<{ attempt: Attempt; id: number | null }> {
    const at = Date.now();
    const started = performance.now();
    const attempt: Attempt = { key, at, ms: 0, status: null };
    let id: number | null = null;
    try {
      const response = await fetch(`${this.options.url}/api/v1/gifts`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Service-API-Key': this.options.apiKey,
          'Idempotency-Key': key,
        },
        body: JSON.stringify({
          donor_id: this.options.donorId,
          amount: 12.5,
          subject: key,
          gift_date: '2026-06-01',
        }),
        // Far beyond the limit the checks hold it to: only there to end a true hang.
        signal: AbortSignal.timeout(HANG_LIMIT_MS + 15_000),
      });
      const text = await response.text();
      attempt.status = response.status;
      if (response.headers.get('idempotent-replayed') === 'true') attempt.replayed = true;
      const body = (text ? JSON.parse(text) : {}) as {
        id?: number;
        error?: { code?: string; request_id?: string };
      };
      id = typeof body.id === 'number' ? body.id : null;
      if (body.error?.code) attempt.code = body.error.code;
      attempt.requestId = response.headers.get('request-id') ?? body.error?.request_id;
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      attempt.error = cause?.code ?? cause?.message ?? (error as Error).message;
    }
    attempt.ms = Math.round(performance.now() - started);
    this.attempts.push(attempt);
    return { attempt, id };
  }
}

const isSuccess = (status: number | null) => status !== null && status >= 200 && status < 300;

/**
 * The service as separate processes: one API on a fixed port (so that it can come back on the
 * same one) and any number of workers, against a test service's database and queue prefix. The
 * test service's own in-process worker is closed so that only the processes do the work.
 */
export interface Rig {
  service: TestService;
  env: Record<string, string>;
  apiUrl: string;
  api: ServiceProcess;
  workers: ServiceProcess[];
  donorId: number;
  startApi(): Promise<ServiceProcess>;
  startWorker(): Promise<ServiceProcess>;
  /** Clients writing gifts; each gives up on a key after `giveUpAfterMs` (default 30 s). */
  stream(label: string, clients?: number, giveUpAfterMs?: number): GiftStream;
  /** One gift create through the API process, of the rig's donor, under `key`. */
  postGift(key: string, amount?: number): Promise<Response>;
  /** Kills one of the rig's processes (SIGKILL unless told), as a crash would. */
  kill(proc: ServiceProcess, signal?: NodeJS.Signals): Promise<void>;
  /** Distinct error messages the processes logged at level error or above, with counts. */
  loggedErrors(): Record<string, number>;
  /** What the API logged as the cause of a 5xx, by request id. */
  causes(): Map<string, string>;
  /** How each process the test did not stop ended: its last lines on stderr. */
  crashes: string[];
  close(): Promise<void>;
}

export interface RigOptions {
  workers?: number;
  /** Environment for the service and its processes (REDIS_URL, WORKER_LOCK_DURATION_MS, ...). */
  env?: Record<string, string>;
  /** Environment for the API process alone (e.g. its own REDIS_URL through a proxy). */
  apiEnv?: Record<string, string>;
  /**
   * Restart the API on the same port when it dies unasked, as a process manager would, so a
   * crash shows up in `crashes` without ending the run.
   */
  superviseApi?: boolean;
  /**
   * Leave WRITE_TIMEOUT_MS at the service's default instead of the suite's short one, for a test
   * that measures what a user of the default settings sees.
   */
  defaultWriteTimeout?: boolean;
  serviceOptions?: ServiceOptions;
}

export async function startRig(options: RigOptions = {}): Promise<Rig> {
  const service = await startTestService(
    {
      ...(options.defaultWriteTimeout ? {} : { WRITE_TIMEOUT_MS: String(WRITE_TIMEOUT_MS) }),
      ...options.env,
    },
    options.serviceOptions,
  );
  const donor = await service.call<{ id: number }>('POST', '/api/v1/donors', {
    body: { role: 'Individual', first_name: 'Grace', last_name: 'Hopper', email: 'g@example.org' },
  });
  if (donor.status !== 201) throw new Error(`donor not created: ${donor.status}`);
  await Promise.all(service.workers.splice(0).map((worker) => worker.close()));

  const port = await freePort();
  const env = configEnv(service.config, {
    PORT: String(port),
    WORKER_CONCURRENCY: '8',
    DATABASE_POOL_SIZE: '10',
    ...options.env,
  });
  const processes: ServiceProcess[] = [];
  /** Processes the test itself stopped or killed. */
  const killed = new Set<ServiceProcess>();
  let closing = false;
  /** A supervised restart under way, which close() must wait for before killing everything. */
  let restarting: Promise<unknown> = Promise.resolve();
  const rig: Rig = {
    service,
    env,
    apiUrl: `http://127.0.0.1:${port}`,
    api: undefined as unknown as ServiceProcess,
    workers: [],
    donorId: donor.body.id,
    crashes: [],
    async startApi() {
      const api = spawnEntry('api/main.js', { ...env, ...options.apiEnv });
      processes.push(api);
      rig.api = api;
      void api.exited.then(() => {
        if (killed.has(api)) return;
        rig.crashes.push(api.stderr.slice(-12).join('\n'));
        if (options.superviseApi && !closing) restarting = rig.startApi().catch(() => api);
      });
      await waitForLog(api, 'api listening', 20_000);
      return api;
    },
    async startWorker() {
      const worker = spawnEntry('worker/main.js', env);
      processes.push(worker);
      rig.workers.push(worker);
      await waitForLog(worker, 'worker ready', 20_000);
      return worker;
    },
    postGift(key, amount = 5) {
      return fetch(`${rig.apiUrl}/api/v1/gifts`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Service-API-Key': service.tenant.key,
          'Idempotency-Key': key,
        },
        body: JSON.stringify({
          donor_id: rig.donorId,
          amount,
          subject: key,
          gift_date: '2026-06-01',
        }),
      });
    },
    stream(label, clients = 6, giveUpAfterMs) {
      return new GiftStream({
        url: rig.apiUrl,
        apiKey: service.tenant.key,
        donorId: rig.donorId,
        clients,
        label,
        giveUpAfterMs,
      });
    },
    loggedErrors() {
      const counts: Record<string, number> = {};
      const count = (message: string) => (counts[message] = (counts[message] ?? 0) + 1);
      for (const proc of processes) {
        for (const line of proc.stdout) {
          try {
            const entry = JSON.parse(line) as {
              level?: string;
              msg?: string;
              err?: { message?: string };
            };
            if (entry.level === 'error' || entry.level === 'fatal')
              count(`${entry.msg ?? ''}: ${entry.err?.message ?? ''}`);
          } catch {
            // not a log line
          }
        }
        for (const line of proc.stderr) count(`stderr: ${line}`);
        if (!killed.has(proc) && (proc.child.exitCode !== null || proc.child.signalCode !== null))
          count(`process exited unasked: ${proc.child.exitCode ?? proc.child.signalCode}`);
      }
      return counts;
    },
    kill(proc, signal = 'SIGKILL') {
      killed.add(proc);
      return killProcess(proc, signal);
    },
    causes() {
      const causes = new Map<string, string>();
      for (const line of processes.flatMap((proc) => proc.stdout)) {
        try {
          const entry = JSON.parse(line) as { requestId?: string; err?: { message?: string } };
          if (entry.requestId && entry.err?.message) causes.set(entry.requestId, entry.err.message);
        } catch {
          // not a log line
        }
      }
      return causes;
    },
    async close() {
      closing = true;
      await restarting;
      for (const proc of processes) {
        killed.add(proc);
        proc.child.kill('SIGCONT');
      }
      await Promise.all(processes.map((proc) => killProcess(proc)));
      await service.close();
    },
  };
  try {
    await rig.startApi();
    for (let index = 0; index < (options.workers ?? 1); index += 1) await rig.startWorker();
  } catch (error) {
    await rig.close();
    throw error;
  }
  return rig;
}

/** Sends one fresh write (with retries) and says how long after `since` it succeeded. */
export async function recoveryTime(stream: GiftStream, since: number): Promise<number> {
  const result = await stream.write(`${stream.nextKey()}-fresh`);
  return isSuccess(result.status) ? Date.now() - since : Number.POSITIVE_INFINITY;
}

/** Queries of this database waiting for a lock: writes held inside a worker's statement. */
const blockedQueries = async (db: DatabasePool) =>
  Number(
    await db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM pg_stat_activity
                 WHERE wait_event_type = 'Lock' AND datname = current_database()`,
    ),
  );

/**
 * Writes held mid-job: those of the jobs the workers have taken while their writes wait for a
 * lock. A worker commits concurrent creates in one statement (worker/groupCommit.ts), so a single
 * blocked query can hold many writes, and a job carries the writes an API process queued together.
 */
export async function heldWrites(db: DatabasePool, queue: Queue): Promise<number> {
  if ((await blockedQueries(db)) === 0) return 0;
  return activeWrites([queue]);
}

export interface FaultReport {
  keys: number;
  acknowledged: number;
  attempts: number;
  statuses: Record<string, number>;
  /** Subjects (= keys) with more than one gift row. */
  duplicated: { key: string; rows: number }[];
  /** Keys answered 2xx whose gift row is missing or is not the one the answer named. */
  lost: { key: string; answered: number | null; stored: number[] }[];
  /** Gift rows with no completed, unexpired receipt under their key that replays them. */
  withoutReceipt: { id: number; subject: string }[];
  /** Gifts (stored or not) with other than exactly one `gift.created` event of a stored gift. */
  wrongEvents: { id: number; events: number; stored: boolean }[];
  /** Requests that took longer than HANG_LIMIT_MS. */
  slow: Attempt[];
  /** Answers a client cannot act on: neither 2xx, 409, 503, 504 nor a connection error. */
  undocumented: Attempt[];
  /** Keys that never got a 2xx. */
  unresolved: KeyResult[];
  recoveredInMs: number;
  loggedErrors: Record<string, number>;
  /** Processes that died without being told to (their last stderr lines). */
  crashes: string[];
}

const eventCount = z.object({ id: z.number(), events: z.number(), stored: z.boolean() });

const giftRow = z.object({
  id: z.number(),
  subject: z.string(),
  receipt_key: z.string().nullable(),
});

/** Compares what the clients were told with what is in the database. */
export async function inspect(
  rig: Rig,
  streams: GiftStream[],
  recoveredInMs: number,
): Promise<FaultReport> {
  const rows = await rig.service.db.any(sql.type(giftRow)`
    SELECT g.id, g.subject, r.key AS receipt_key
    FROM gifts g
    LEFT JOIN write_receipts r
      ON r.institution_id = g.institution_id AND r.source = 'client' AND r.key = g.subject
      AND r.status_code BETWEEN 200 AND 299 AND r.expires_at > now()
      AND (r.response_body ->> 'id')::bigint = g.id
    WHERE g.institution_id = ${rig.service.tenant.institutionId}`);
  const events = await rig.service.db.any(sql.type(eventCount)`
    SELECT coalesce(g.id, e.object_id) AS id, count(e.seq)::int AS events, g.id IS NOT NULL AS stored
    FROM (SELECT id FROM gifts WHERE institution_id = ${rig.service.tenant.institutionId}) g
    FULL JOIN (SELECT seq, object_id FROM events
               WHERE institution_id = ${rig.service.tenant.institutionId} AND type = 'gift.created') e
      ON e.object_id = g.id
    GROUP BY 1, 3`);
  const bySubject = new Map<string, number[]>();
  for (const row of rows)
    bySubject.set(row.subject, [...(bySubject.get(row.subject) ?? []), row.id]);

  const attempts = streams.flatMap((stream) => stream.attempts);
  const causes = rig.causes();
  for (const attempt of attempts) {
    if (attempt.status !== null && attempt.status >= 500 && attempt.requestId)
      attempt.cause = causes.get(attempt.requestId);
  }
  const results = streams.flatMap((stream) => [...stream.results.values()]);
  const statuses: Record<string, number> = {};
  for (const attempt of attempts) {
    const label = attempt.status === null ? `error ${attempt.error}` : String(attempt.status);
    statuses[label] = (statuses[label] ?? 0) + 1;
  }
  return {
    keys: results.length,
    acknowledged: results.filter((result) => isSuccess(result.status)).length,
    attempts: attempts.length,
    statuses,
    duplicated: [...bySubject]
      .filter(([, ids]) => ids.length > 1)
      .map(([key, ids]) => ({ key, rows: ids.length })),
    lost: results
      .filter((result) => isSuccess(result.status))
      .filter((result) => {
        const stored = bySubject.get(result.key) ?? [];
        return stored.length !== 1 || stored[0] !== result.giftId;
      })
      .map((result) => ({
        key: result.key,
        answered: result.giftId,
        stored: bySubject.get(result.key) ?? [],
      })),
    withoutReceipt: rows
      .filter((row) => row.receipt_key === null)
      .map(({ id, subject }) => ({ id, subject })),
    wrongEvents: events.filter((row) => row.events !== 1 || !row.stored),
    slow: attempts.filter((attempt) => attempt.ms > HANG_LIMIT_MS),
    undocumented: attempts.filter(
      (attempt) =>
        attempt.status !== null && !isSuccess(attempt.status) && !RETRIED.has(attempt.status),
    ),
    unresolved: results
      .filter((result) => !isSuccess(result.status))
      .map((result) => ({
        ...result,
        cause: attempts.filter((attempt) => attempt.key === result.key).at(-1)?.cause,
      })),
    recoveredInMs,
    loggedErrors: rig.loggedErrors(),
    crashes: [...rig.crashes],
  };
}

export type Check =
  | 'once'
  | 'acknowledged'
  | 'receipts'
  | 'events'
  | 'hang'
  | 'recovery'
  | 'documented'
  | 'resolved'
  | 'alive';

export interface CheckOptions {
  /** Checks that fail today because of a known bug: they run as test.failing. */
  failing?: Check[];
  /**
   * Known bugs, each proven by its own deterministic test.failing, that this fault can hit by
   * chance: a 5xx, slow answer or crash whose logged cause matches one of these is left out of
   * the checks (and counted in the summary) so the run does not turn red at random.
   */
  knownBugs?: RegExp[];
}

/**
 * The checks every fault must pass, one test each. A check named in `failing` documents a known
 * bug: it runs as test.failing, so the suite turns red once the bug is fixed and the mark stays.
 */
export function faultChecks(report: () => FaultReport, options: CheckOptions = {}): void {
  const known = (cause: string | undefined) =>
    cause !== undefined && (options.knownBugs ?? []).some((bug) => bug.test(cause));
  const checks: [Check, string, (r: FaultReport) => void][] = [
    [
      'once',
      'no key has more than one gift row',
      (r) => {
        expect(r.acknowledged).toBeGreaterThan(0);
        expect(r.duplicated).toEqual([]);
      },
    ],
    [
      'acknowledged',
      'every key that got a 2xx has exactly the one gift row its answer named',
      (r) => expect(r.lost).toEqual([]),
    ],
    [
      'receipts',
      'every gift row has a completed write receipt that replays it',
      (r) => expect(r.withoutReceipt).toEqual([]),
    ],
    [
      'events',
      'every gift row has exactly one event, and every gift event names a gift row',
      (r) => expect(r.wrongEvents).toEqual([]),
    ],
    [
      'hang',
      `no request took longer than WRITE_TIMEOUT_MS plus a second (${HANG_LIMIT_MS} ms)`,
      (r) => expect(r.slow.filter((attempt) => !known(attempt.cause))).toEqual([]),
    ],
    [
      'documented',
      'every answer was a 2xx or one a client retries (409, 503, 504, connection error)',
      (r) => expect(r.undocumented.filter((attempt) => !known(attempt.cause))).toEqual([]),
    ],
    [
      'resolved',
      'every key the clients sent was written in the end',
      (r) => expect(r.unresolved.filter((result) => !known(result.cause))).toEqual([]),
    ],
    [
      'recovery',
      `a fresh write succeeds within ${RECOVERY_LIMIT_MS / 1000} s of the fault ending`,
      (r) => expect(r.recoveredInMs).toBeLessThan(RECOVERY_LIMIT_MS),
    ],
    [
      'alive',
      'no process died without being told to',
      (r) => expect(r.crashes.filter((crash) => !known(crash))).toEqual([]),
    ],
  ];
  for (const [name, title, check] of checks) {
    (options.failing?.includes(name) ? test.failing : test)(title, () => check(report()));
  }
}

/** One line per fault for the test log: what the clients saw. */
export function summary(name: string, report: FaultReport): string {
  const causes: Record<string, number> = {};
  for (const attempt of [...report.undocumented, ...report.slow]) {
    const cause = attempt.cause ?? `status ${attempt.status}`;
    causes[cause] = (causes[cause] ?? 0) + 1;
  }
  return [
    `${name}: ${report.keys} keys, ${report.acknowledged} acknowledged, ${report.attempts} requests`,
    `statuses ${JSON.stringify(report.statuses)}`,
    `recovered in ${report.recoveredInMs} ms`,
    `5xx other than 503/504 or slow, by cause: ${JSON.stringify(causes)}`,
    `crashes: ${report.crashes.length ? report.crashes.join('\n---\n') : 'none'}`,
  ].join('\n');
}
