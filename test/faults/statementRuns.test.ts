// A giving statement run under worker crashes (fundraising.md §6): the worker stepping a run is
// killed with SIGKILL mid-run and another started; afterwards every donor over min_total has
// exactly one statement of the run, none is skipped, and the numbers are 1..N with no gap.
import { sql } from 'slonik';
import { z } from 'zod';
import { waitFor } from '../helpers/wait.js';
import { startRig, type Rig } from './faultKit.js';

const DONORS = 120;

interface Run {
  id: number;
  status: string;
  donors_total: number;
  donors_done: number;
}

describe('the worker stepping a statement run killed with SIGKILL, then another started', () => {
  let rig: Rig;
  let donorIds: number[];
  let doneAtKill: number;
  let run: Run;

  beforeAll(async () => {
    // Small steps, so that the kill lands with the run part done and a step in flight.
    rig = await startRig({ workers: 1, env: { STATEMENT_RUN_BATCH: '4' } });
    const post = async (path: string, body: Record<string, unknown>) => {
      const answer = await rig.service.call<{ id: number }>('POST', `/api/v1${path}`, { body });
      if (answer.status !== 201) throw new Error(`${path}: ${answer.status}`);
      return answer.body.id;
    };
    donorIds = [];
    for (let first = 0; first < DONORS; first += 20)
      donorIds.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, async (_, index) => {
            const id = await post('/donors', {
              role: 'Individual',
              first_name: 'Run',
              last_name: `Donor ${first + index}`,
              email: `run${first + index}@example.org`,
            });
            await post('/gifts', {
              donor_id: id,
              amount: 25,
              subject: 'Fund',
              gift_date: '2025-05-01',
            });
            return id;
          }),
        )),
      );

    const accepted = await rig.service.call<Run>('POST', '/api/v1/giving-statement-runs', {
      body: { year: 2025 },
    });
    expect(accepted.status).toBe(202);
    const progress = async () =>
      (await rig.service.call<Run>('GET', `/api/v1/giving-statement-runs/${accepted.body.id}`))
        .body;
    await waitFor(async () => (await progress()).donors_done >= 12, 30_000, 'the run under way');
    await rig.kill(rig.workers.shift()!);
    doneAtKill = (await progress()).donors_done;
    await rig.startWorker();
    await waitFor(async () => (await progress()).status === 'completed', 60_000, 'the run done');
    run = await progress();
  }, 180_000);

  afterAll(async () => {
    await rig?.close();
  });

  test('the kill landed mid-run', () => {
    expect(doneAtKill).toBeGreaterThan(0);
    expect(doneAtKill).toBeLessThan(DONORS);
  });

  test('every donor has exactly one statement, numbered 1..N with no gap', async () => {
    // The rig's own donor has no gift: it gets none.
    expect(run).toMatchObject({ status: 'completed', donors_total: DONORS, donors_done: DONORS });
    const rows = await rig.service.db.any(sql.type(
      z.object({ donor_id: z.number(), seq: z.number(), status: z.string() }),
    )`
      SELECT donor_id, seq, status FROM giving_statements
      WHERE institution_id = ${rig.service.tenant.institutionId} AND run_id = ${run.id}
      ORDER BY seq`);
    expect(rows.map((row) => row.seq)).toEqual(Array.from({ length: DONORS }, (_, i) => i + 1));
    expect(rows.map((row) => row.donor_id).sort((a, b) => a - b)).toEqual(
      [...donorIds].sort((a, b) => a - b),
    );
    expect(rows.every((row) => row.status === 'issued')).toBe(true);
    const events = await rig.service.db.anyFirst(sql.type(z.object({ type: z.string() }))`
      SELECT type FROM events WHERE institution_id = ${rig.service.tenant.institutionId}
        AND type IN ('giving_statement.issued', 'giving_statement_run.completed')`);
    expect(events.filter((type) => type === 'giving_statement.issued')).toHaveLength(DONORS);
    expect(events.filter((type) => type === 'giving_statement_run.completed')).toHaveLength(1);
  });
});
