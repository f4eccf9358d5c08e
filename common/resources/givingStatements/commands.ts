import { sql, type CommonQueryMethods } from 'slonik';
import { type Command } from '../../commands/command.js';
import {
  apiPath,
  judgeRecord,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { today } from '../../clock.js';
import { errors, type FieldError } from '../../errors.js';
import { findInstitution } from '../../institutions.js';
import { displayName, mailingAddress } from '../donors/present.js';
import { donorTable, type DonorRow } from '../donors/schema.js';
import { readOnlyOf } from '../responseFields.js';
import { findRow } from '../table.js';
import { presentGivingStatement } from './present.js';
import { countedGifts, issueStatement, periodDays, statementMoney } from './queries.js';
import { givingStatementResponse } from './response.js';
import {
  givingStatementDefaults,
  givingStatementIdentity,
  givingStatementShape,
  givingStatementTable,
  type GivingStatementFields,
  type GivingStatementRow,
  type StatementPeriod,
} from './schema.js';

const problem = (param: string, code: FieldError['code'], message: string): FieldError => ({
  param,
  code,
  message,
});

export const givingStatementsResource: WritableResource<GivingStatementRow, GivingStatementFields> =
  {
    identity: givingStatementIdentity,
    table: givingStatementTable,
    shape: givingStatementShape,
    defaults: givingStatementDefaults,
    readOnly: readOnlyOf(givingStatementResponse, givingStatementShape),
    present: presentGivingStatement,
  };

/** What a statement is issued for: a donor of the institution and a period that has begun. */
export interface StatementRequest {
  donor: DonorRow;
  year: number;
  period: StatementPeriod;
  baseCurrency: string;
  startMonth: number;
}

/**
 * The statement's fields as of now, from the donor's counted gifts; null when nothing counts in
 * the period. The donor's name and mailing address are copied: the statement keeps them.
 */
export async function statementFields(
  db: CommonQueryMethods,
  institutionId: number,
  request: StatementRequest,
  runId: number | null,
): Promise<GivingStatementFields | null> {
  const days = periodDays(request.period, request.year, request.startMonth);
  const gifts = await countedGifts(db, institutionId, request.donor.id, days);
  if (gifts.length === 0) return null;
  return {
    year: request.year,
    donor_id: request.donor.id,
    period: request.period,
    period_start: days.start,
    period_end: days.end,
    run_id: runId,
    donor_name: displayName(request.donor),
    donor_address: mailingAddress(request.donor),
    currency: request.baseCurrency,
    ...statementMoney(gifts),
    issued_on: today(),
  };
}

/** The year must have begun: a statement of a period yet to come would state nothing. */
export function futureYearProblem(
  period: StatementPeriod,
  year: number,
  startMonth: number,
): FieldError | null {
  const { start } = periodDays(period, year, startMonth);
  return start > today()
    ? problem('year', 'out_of_range', `is in the future: its ${period} year begins on ${start}`)
    : null;
}

/** Judges the body: the donor (read, key-share locked in a real write), the year and period. */
async function judgeStatement(
  ctx: Parameters<Command['execute']>[0],
  check: RecordCheck<GivingStatementRow>,
): Promise<StatementRequest> {
  const { record, validation, valid } = check;
  const institution = await findInstitution(ctx.db, ctx.institution.id);
  if (!institution) throw new Error(`institution ${ctx.institution.id} is gone`);
  let donor: DonorRow | null = null;
  if (valid('donor_id')) {
    // Key-share, as the statement's foreign key would lock it: a merge of the donor waits.
    donor = await findRow(
      ctx.db,
      donorTable,
      ctx.institution.id,
      record.donor_id as number,
      ctx.dryRun ? sql.fragment`` : sql.fragment`FOR KEY SHARE`,
    );
    if (!donor)
      validation.errors.push(
        problem('donor_id', 'reference_not_found', 'does not name an existing donor'),
      );
    else if (donor.status === 'merged')
      validation.errors.push(
        problem(
          'donor_id',
          'invalid_value',
          `names a donor merged into donor ${donor.merged_into_id}; issue the statement to that donor`,
        ),
      );
  }
  const period = record.period as StatementPeriod;
  if (valid('year') && valid('period')) {
    const future = futureYearProblem(
      period,
      record.year as number,
      institution.fiscal_year_start_month,
    );
    if (future) validation.errors.push(future);
  }
  if (validation.errors.length || !donor) throw errors.validationFailed(validation.errors);
  return {
    donor,
    year: record.year as number,
    period,
    baseCurrency: institution.currency,
    startMonth: institution.fiscal_year_start_month,
  };
}

export const nothingCounted = (request: Pick<StatementRequest, 'period' | 'year'>) =>
  errors.validationFailed([
    problem(
      'donor_id',
      'nothing_counted',
      `names a donor with no gift that counts in ${request.period} year ${request.year}: there is nothing to state`,
    ),
  ]);

/** POST /giving-statements: issues the donor's statement of a period, superseding the last. */
export const issueGivingStatementCommand: Command = {
  name: `${givingStatementIdentity.name}.create`,
  async execute(ctx, request) {
    const check = judgeRecord(ctx, givingStatementsResource, request.body, null);
    const judged = await judgeStatement(ctx, check);
    const fields = await statementFields(ctx.db, ctx.institution.id, judged, null);
    if (!fields) throw nothingCounted(judged);
    const row: GivingStatementRow = ctx.dryRun
      ? {
          ...fields,
          id: 0,
          seq: 0,
          status: 'issued',
          superseded_by_id: null,
          created_at: ctx.now,
          updated_at: ctx.now,
        }
      : await issueStatement(ctx.db, ctx.institution.id, fields);
    return {
      status: 201,
      body: presentGivingStatement(row),
      location: `${apiPath(givingStatementIdentity)}/${row.id}`,
    };
  },
};
