import { type Command } from '../../commands/command.js';
import { apiPath, judgeRecord, type WritableResource } from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import { findInstitution } from '../../institutions.js';
import { futureYearProblem } from '../givingStatements/commands.js';
import { periodDays } from '../givingStatements/queries.js';
import type { StatementPeriod } from '../givingStatements/schema.js';
import { readOnlyOf } from '../responseFields.js';
import { insertRow } from '../table.js';
import { presentGivingStatementRun } from './present.js';
import { countQualifying } from './queries.js';
import { givingStatementRunResponse } from './response.js';
import {
  givingStatementRunDefaults,
  givingStatementRunIdentity,
  givingStatementRunShape,
  givingStatementRunTable,
  type GivingStatementRunFields,
  type GivingStatementRunRow,
} from './schema.js';

export const givingStatementRunsResource: WritableResource<
  GivingStatementRunRow,
  GivingStatementRunFields
> = {
  identity: givingStatementRunIdentity,
  table: givingStatementRunTable,
  shape: givingStatementRunShape,
  defaults: givingStatementRunDefaults,
  readOnly: readOnlyOf(givingStatementRunResponse, givingStatementRunShape),
  present: presentGivingStatementRun,
};

/**
 * POST /giving-statement-runs: queues a run that issues a statement to every donor whose counted
 * giving in the period is above `min_total` (202); the workers carry it out (./progress.ts).
 */
export const createGivingStatementRunCommand: Command = {
  name: `${givingStatementRunIdentity.name}.create`,
  async execute(ctx, request) {
    const { record, validation, valid } = judgeRecord(
      ctx,
      givingStatementRunsResource,
      request.body,
      null,
    );
    const institution = await findInstitution(ctx.db, ctx.institution.id);
    if (!institution) throw new Error(`institution ${ctx.institution.id} is gone`);
    const period = record.period as StatementPeriod;
    if (valid('year') && valid('period')) {
      const future = futureYearProblem(
        period,
        record.year as number,
        institution.fiscal_year_start_month,
      );
      if (future) validation.errors.push(future);
    }
    if (validation.errors.length) throw errors.validationFailed(validation.errors);
    const year = record.year as number;
    const days = periodDays(period, year, institution.fiscal_year_start_month);
    const minTotal = String(record.min_total);
    const fields: GivingStatementRunFields = {
      year,
      period,
      period_start: days.start,
      period_end: days.end,
      min_total: minTotal,
      // Counted again when the run starts: the donors may give meanwhile.
      donors_total: await countQualifying(ctx.db, ctx.institution.id, days, minTotal),
    };
    const row: GivingStatementRunRow = ctx.dryRun
      ? {
          ...fields,
          id: 0,
          institution_id: ctx.institution.id,
          status: 'queued',
          donors_done: 0,
          last_donor_id: 0,
          completed_at: null,
          created_at: ctx.now,
          updated_at: ctx.now,
        }
      : await insertRow(ctx.db, givingStatementRunTable, ctx.institution.id, fields);
    return {
      status: 202,
      body: presentGivingStatementRun(row),
      location: `${apiPath(givingStatementRunIdentity)}/${row.id}`,
    };
  },
};
