import pg from 'pg';
import { sleep } from '../helpers/wait.js';
import {
  faultChecks,
  inspect,
  recoveryTime,
  startRig,
  summary,
  type FaultReport,
  type GiftStream,
  type Rig,
} from './faultKit.js';

describe("Postgres terminating every connection of the service's database, repeatedly, under load", () => {
  let rig: Rig;
  let stream: GiftStream;
  let report: FaultReport;
  let terminated = 0;

  beforeAll(async () => {
    rig = await startRig();
    stream = rig.stream('pg-terminate');
    stream.start();
    await stream.progress(30);

    // As an operator would, on the server directly: the service's own login need not be allowed
    // to end other sessions.
    const admin = new pg.Client({
      connectionString:
        rig.service.config.DATABASE_MIGRATION_URL ?? rig.service.config.DATABASE_URL,
    });
    await admin.connect();
    try {
      for (let round = 0; round < 12; round += 1) {
        const result = await admin.query<{ terminated: boolean }>(
          `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        );
        terminated += result.rows.filter((row) => row.terminated).length;
        await sleep(400);
      }
    } finally {
      await admin.end();
    }
    const ended = Date.now();
    const recovered = await recoveryTime(stream, ended);
    await sleep(3_000);
    await stream.stop();
    report = await inspect(rig, [stream], recovered);
    console.log(summary('Postgres terminate', report) + `, ${terminated} backends terminated`);
  });
  afterAll(async () => {
    // Stopped here too, should the fault fail half-way: clients left running keep Jest alive.
    await stream?.stop();
    await rig?.close();
  });

  faultChecks(() => report);

  test('connections were cut while writes were in flight, and both processes survived it', () => {
    expect(terminated).toBeGreaterThanOrEqual(12);
    expect(stream.attempts.some((attempt) => attempt.status === 503)).toBe(true);
    expect(rig.api.child.exitCode).toBeNull();
    expect(rig.workers.map((worker) => worker.child.exitCode)).toEqual([null]);
  });
});
