import { sql, type DatabasePool, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { insertEvents, type OutboxEvent } from '../../events/outbox.js';
import { findInstitution } from '../../institutions.js';
import { donorTable } from '../donors/schema.js';
import { statementFields } from '../givingStatements/commands.js';
import { presentGivingStatement } from '../givingStatements/present.js';
import { issueStatement, type PeriodDays } from '../givingStatements/queries.js';
import { columnsOf, findRow } from '../table.js';
import { presentGivingStatementRun } from './present.js';
import { countQualifying, nextQualifying } from './queries.js';
import { givingStatementRunTable, type GivingStatementRunRow } from './schema.js';

/** Donors per transaction: short enough to hold the year's number row briefly. */
export const RUN_BATCH = 25;

const creation = z.object({ request_id: z.string().nullable(), api_key_id: z.string().nullable() });

/** A step of this run threw (its transaction rolled back): the worker counts these. */
export class RunStepFailed extends Error {
  constructor(
    readonly run: Pick<GivingStatementRunRow, 'id' | 'institution_id'>,
    options: { cause: unknown },
  ) {
    super(`a step of giving statement run ${run.id} failed`, options);
  }
}

/**
 * Gives a run up (`failed`) unless it finished meanwhile: what its statements committed stays,
 * numbered, and the runs after it get their turn.
 */
export async function failStatementRun(
  pool: DatabasePool,
  run: Pick<GivingStatementRunRow, 'id' | 'institution_id'>,
): Promise<void> {
  await pool.query(sql.unsafe`
    UPDATE giving_statement_runs SET status = 'failed', updated_at = now()
    WHERE institution_id = ${run.institution_id} AND id = ${run.id}
      AND status IN ('queued', 'running')`);
}

/**
 * One step of one unfinished run, in one transaction: the next donors after the run's
 * `last_donor_id` get their statements (numbered as any issue is) and events, and the run's
 * `last_donor_id` and `donors_done` move past them, all committed together or not at all. A
 * worker killed mid-step leaves the run as its last step committed it, and the next step (of any
 * worker) starts from there: no donor twice, none skipped, no number lost. The run's row is taken
 * FOR UPDATE SKIP LOCKED, so each run is stepped by one worker at a time and the workers share
 * the runs. Answers the run as the step left it, null when no run was waiting.
 */
export async function stepStatementRun(
  pool: DatabasePool,
  batch = RUN_BATCH,
): Promise<GivingStatementRunRow | null> {
  return pool.transaction(async (db) => {
    const run = (await db.maybeOne(sql.type(givingStatementRunTable.row)`
      SELECT ${columnsOf(givingStatementRunTable)} FROM giving_statement_runs
      WHERE status IN ('queued', 'running')
      ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`)) as GivingStatementRunRow | null;
    if (!run) return null;
    try {
      return await stepRun(db, run, batch);
    } catch (error) {
      // A step that lost to a deadlock or a serialization failure (SQLSTATE 40…) Slonik retries.
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('40')) throw error;
      throw new RunStepFailed(run, { cause: error });
    }
  });
}

/** The step itself, in the transaction that holds the run's row. */
async function stepRun(
  db: DatabaseTransactionConnection,
  run: GivingStatementRunRow,
  batch: number,
): Promise<GivingStatementRunRow> {
  const institution = await findInstitution(db, run.institution_id);
  if (!institution) throw new Error(`institution ${run.institution_id} is gone`);
  const days: PeriodDays = { start: run.period_start, end: run.period_end };
  const minTotal = String(run.min_total);
  // The events carry the create's request and key, as an import's do.
  const source = (await db.maybeOne(sql.type(creation)`
      SELECT request_id, api_key_id FROM events
      WHERE institution_id = ${run.institution_id} AND object_type = 'giving_statement_run'
        AND object_id = ${run.id} AND type = 'giving_statement_run.created'
      LIMIT 1`)) ?? { request_id: null, api_key_id: null };
  const event = (type: string, objectType: string, id: number, data: OutboxEvent['data']) => ({
    institutionId: run.institution_id,
    type,
    objectType,
    objectId: id,
    data,
    previousAttributes: null,
    requestId: source.request_id,
    apiKeyId: source.api_key_id,
  });

  const total =
    run.status === 'queued'
      ? await countQualifying(db, run.institution_id, days, minTotal)
      : run.donors_total;
  const donorIds = await nextQualifying(
    db,
    run.institution_id,
    days,
    minTotal,
    run.last_donor_id,
    batch,
  );
  const events: OutboxEvent[] = [];
  for (const donorId of donorIds) {
    const donor = await findRow(
      db,
      donorTable,
      run.institution_id,
      donorId,
      sql.fragment`FOR KEY SHARE`,
    );
    const fields =
      donor &&
      (await statementFields(
        db,
        run.institution_id,
        {
          donor,
          year: run.year,
          period: run.period,
          baseCurrency: institution.currency,
          startMonth: institution.fiscal_year_start_month,
        },
        run.id,
      ));
    // A donor whose giving changed since it was counted has nothing to state: done all the same.
    if (!fields) continue;
    const statement = await issueStatement(db, run.institution_id, fields);
    events.push(
      event(
        'giving_statement.issued',
        'giving_statement',
        statement.id,
        presentGivingStatement(statement),
      ),
    );
  }
  const finished = donorIds.length < batch;
  const done = run.donors_done + donorIds.length;
  const next = (await db.one(sql.type(givingStatementRunTable.row)`
      UPDATE giving_statement_runs
      SET status = ${finished ? 'completed' : 'running'},
          donors_total = ${finished ? done : Math.max(total, done)},
          donors_done = ${done},
          last_donor_id = ${donorIds.at(-1) ?? run.last_donor_id},
          completed_at = ${finished ? sql.fragment`now()` : null},
          updated_at = now()
      WHERE institution_id = ${run.institution_id} AND id = ${run.id}
      RETURNING ${columnsOf(givingStatementRunTable)}`)) as GivingStatementRunRow;
  if (finished)
    events.push(
      event(
        'giving_statement_run.completed',
        'giving_statement_run',
        run.id,
        presentGivingStatementRun(next),
      ),
    );
  await insertEvents(db, events);
  return next;
}
