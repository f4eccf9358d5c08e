import { IntegrityConstraintViolationError, sql, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type {
  Command,
  CommandOutcome,
  Consequence,
  Institution,
  LookupCache,
  SingleStatementCreate,
} from '../commands/command.js';
import { ApiError } from '../errors.js';
import { insertEvents, previousAttributes, type OutboxEvent } from '../events/outbox.js';
import { consequenceTypeOf, eventTypeOf } from '../events/types.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json.js';
import { createDonor, updateDonorCommand } from '../resources/donors/commands.js';
import { donorRoles } from '../resources/donors/schema.js';
import { createGift } from '../resources/gifts/commands.js';
import { checkReferencesAt } from '../resources/checks.js';
import { bodyOfCells, parseDesignationText, type RowBody } from './columns.js';
import { cellOfFile, type FileRow } from './queries.js';
import { MAX_ROW_ERRORS, type ImportRow } from './schema.js';
import { insertRowsFragment } from '../resources/table.js';

/**
 * One row of an import, judged and written by exactly the command of the single-record write
 * (POST /donors, POST /gifts, PATCH /donors/{id} for on_match `update`): its errors are that
 * command's, with the same codes and params. What is particular to a file is only how a row
 * names other records by something other than their id (a fund's code, a donor's external id or
 * email): those names are looked up for the whole chunk in one query each, and become the ids the
 * command checks as it checks any id.
 */
export interface RowError {
  param: string | null;
  code: string;
  message: string;
}

interface Prepared {
  row: number;
  /** The command and its request; null when the row is skipped (on_match `skip`). */
  command: Command | null;
  params: Record<string, string>;
  body: JsonObject;
  /** Problems found in the names of other records, before the command runs. */
  found: RowError[];
  /** Fields whose command errors the found problems stand for (an unresolved fund code). */
  covered: string[];
  /**
   * Fields the row named by another column (`campaign_id` by `campaign_code`, `household_id` by
   * `household_external_id`, the element `emails.1` by the cells `emails.2.*`): the command's
   * errors on the field, or within it, are the column's, so that they name a column of the file.
   */
  namedBy: Record<string, string>;
  /**
   * The donor an earlier row of the same file creates, which this row names as its household:
   * not yet a donor when the chunk is prepared, so it is found as the row is written.
   */
  household: EarlierDonor | null;
}

const idCode = z.object({ id: z.number(), key: z.string() });

const distinct = (values: (string | undefined)[]) => [
  ...new Set(values.filter((value): value is string => typeof value === 'string' && value !== '')),
];

const text = (value: JsonValue | undefined) =>
  typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : undefined;

/** The rows of a chunk as sent, as the bodies of their writes. */
function bodiesOf(file: FileRow, resource: ImportRow['resource'], raw: JsonValue[]) {
  return raw.map((row): RowBody | null => {
    if (file.format === 'csv')
      return Array.isArray(row) ? bodyOfCells(resource, file.columns, row.map(String)) : null;
    return isJsonObject(row) ? { body: { ...row }, columnOf: {}, problems: [] } : null;
  });
}

/** Donors by their emails (lowercased), a merged donor's email finding its survivor. */
async function donorsByEmail(
  db: DatabaseTransactionConnection,
  institutionId: number,
  emails: string[],
) {
  // A live donor holding the same value as a merged one's comes last, and so wins.
  return emails.length
    ? db.any(sql.type(idCode)`
        SELECT merged_into_id AS id, lower(merged_email) AS key FROM donors
        WHERE institution_id = ${institutionId}
          AND lower(merged_email) = ANY(${sql.array(emails, 'text')})
        UNION ALL
        SELECT id, lower(email) AS key FROM donors
        WHERE institution_id = ${institutionId}
          AND lower(email) = ANY(${sql.array(emails, 'text')})`)
    : [];
}

/**
 * Fund codes, donors' external ids and emails, and campaign and appeal codes of a chunk, each
 * kind in one query. Campaign and appeal codes are unique without regard to case, and match so.
 */
async function lookups(
  db: DatabaseTransactionConnection,
  institutionId: number,
  bodies: (JsonObject | null)[],
) {
  const present = bodies.filter((body): body is JsonObject => body !== null);
  const codes = distinct(
    present.flatMap((body) =>
      typeof body.designations === 'string'
        ? (parseDesignationText(body.designations) ?? []).map((part) => part.fund_code)
        : [],
    ),
  );
  const externalIds = distinct(
    present.flatMap((body) => [
      text(body.donor_external_id),
      text(body.external_id),
      text(body.household_external_id),
    ]),
  );
  const emails = distinct(
    present.flatMap((body) => [text(body.donor_email), text(body.email)]),
  ).map((email) => email.toLowerCase());
  const lowered = (column: string) =>
    distinct(present.map((body) => text(body[column]))).map((code) => code.toLowerCase());
  const campaignCodes = lowered('campaign_code');
  const appealCodes = lowered('appeal_code');
  // One after the other: the queries share the chunk's transaction, hence its connection.
  const funds = codes.length
    ? await db.any(sql.type(idCode)`
        SELECT id, code AS key FROM funds
        WHERE institution_id = ${institutionId} AND code = ANY(${sql.array(codes, 'text')})`)
    : [];
  // A merged donor's external_id and email find its survivor (constituents.md §5); a live
  // donor holding the same value now comes last, and so wins.
  const byExternalId = externalIds.length
    ? await db.any(sql.type(idCode)`
        SELECT merged_into_id AS id, merged_external_id AS key FROM donors
        WHERE institution_id = ${institutionId}
          AND merged_external_id = ANY(${sql.array(externalIds, 'text')})
        UNION ALL
        SELECT id, external_id AS key FROM donors
        WHERE institution_id = ${institutionId}
          AND external_id = ANY(${sql.array(externalIds, 'text')})`)
    : [];
  const byEmail = await donorsByEmail(db, institutionId, emails);
  const byCode = (table: 'campaigns' | 'appeals', codes: string[]) =>
    codes.length
      ? db.any(sql.type(idCode)`
          SELECT id, lower(code) AS key FROM ${sql.identifier([table])}
          WHERE institution_id = ${institutionId} AND lower(code) = ANY(${sql.array(codes, 'text')})`)
      : [];
  const campaigns = await byCode('campaigns', campaignCodes);
  const appeals = await byCode('appeals', appealCodes);
  const map = (rows: readonly { id: number; key: string }[]) =>
    new Map(rows.map((row) => [row.key, row.id]));
  return {
    funds: map(funds),
    byExternalId: map(byExternalId),
    byEmail: map(byEmail),
    campaigns: map(campaigns),
    appeals: map(appeals),
  };
}

type Lookups = Awaited<ReturnType<typeof lookups>>;

const notFound = (param: string, what: string): RowError => ({
  param,
  code: 'reference_not_found',
  message: `does not name an existing ${what}`,
});

/** `designations` as `fund_code:amount;...` → the split by fund id. */
function resolveDesignations(body: JsonObject, found: Lookups, prepared: Prepared): void {
  if (typeof body.designations !== 'string') return;
  const parts = parseDesignationText(body.designations);
  if (!parts) {
    prepared.found.push({
      param: 'designations',
      code: 'invalid_format',
      message: 'must be fund_code:amount pairs separated by ";", such as GEN:60;ATH:40',
    });
  } else {
    const missing = parts.flatMap((part, index) =>
      found.funds.has(part.fund_code) ? [] : [notFound(`designations.${index}.fund_code`, 'fund')],
    );
    prepared.found.push(...missing);
    if (!missing.length) {
      body.designations = parts.map((part) => ({
        fund_id: found.funds.get(part.fund_code)!,
        amount: part.amount,
      }));
      return;
    }
  }
  delete body.designations;
  prepared.covered.push('designations', 'fund_id');
}

/** A gift's donor named by `donor_external_id` or `donor_email` instead of `donor_id`. */
function resolveGiftDonor(body: JsonObject, found: Lookups, prepared: Prepared): void {
  const externalId = text(body.donor_external_id);
  const email = text(body.donor_email);
  delete body.donor_external_id;
  delete body.donor_email;
  const named = [body.donor_id !== undefined, externalId !== undefined, email !== undefined];
  if (named.filter(Boolean).length > 1) {
    prepared.found.push({
      param: externalId !== undefined ? 'donor_external_id' : 'donor_email',
      code: 'not_allowed',
      message: 'name the donor once: by donor_id, donor_external_id or donor_email',
    });
    prepared.covered.push('donor_id');
    delete body.donor_id;
    return;
  }
  const [param, id] =
    externalId !== undefined
      ? ['donor_external_id', found.byExternalId.get(externalId)]
      : email !== undefined
        ? ['donor_email', found.byEmail.get(email.toLowerCase())]
        : [null, undefined];
  if (!param) return;
  if (id === undefined) {
    prepared.found.push(notFound(param, 'donor'));
    prepared.covered.push('donor_id');
  } else body.donor_id = id;
}

/**
 * A gift's campaign and appeal named by `campaign_code` and `appeal_code` (any case) instead of
 * `campaign_id` and `appeal_id`; the command then judges the ids as it judges any (a closed
 * campaign, an appeal of another campaign).
 */
function resolveCoding(body: JsonObject, found: Lookups, prepared: Prepared): void {
  for (const kind of ['campaign', 'appeal'] as const) {
    const column = `${kind}_code`;
    const field = `${kind}_id`;
    const code = text(body[column]);
    delete body[column];
    if (code === undefined) continue;
    const id = found[`${kind}s`].get(code.toLowerCase());
    if (body[field] !== undefined) {
      prepared.found.push({
        param: column,
        code: 'not_allowed',
        message: `name the ${kind} once: by ${field} or ${column}`,
      });
      prepared.covered.push(field);
      delete body[field];
    } else if (id === undefined) {
      prepared.found.push(notFound(column, kind));
      prepared.covered.push(field);
    } else {
      body[field] = id;
      prepared.namedBy[field] = column;
    }
  }
}

/** A donor row earlier in the file, by its external id: its place and its role. */
interface EarlierDonor {
  externalId: string;
  row: number;
  role: string;
  email: string | null;
  /**
   * The existing donor the row matches by its email, under on_match `skip` or `update`: the row
   * stands for that donor (skipped, or updated with the external id), so its members join it.
   */
  matched?: number;
}

/**
 * An Individual's household named by `household_external_id` (the household donor's
 * `external_id`) instead of `household_id`; the command then judges the id as it judges any (a
 * donor that is no Household, a row that is no Individual), on the column. A household not yet
 * a donor may be a row earlier in the same file (`households`: each external id's first row):
 * the row joins it as it is written (runRow).
 */
function resolveHousehold(
  body: JsonObject,
  found: Lookups,
  households: ReadonlyMap<string, EarlierDonor>,
  prepared: Prepared,
): void {
  const column = 'household_external_id';
  const externalId = text(body[column]);
  delete body[column];
  if (externalId === undefined) return;
  const id = found.byExternalId.get(externalId);
  const earlierRow = households.get(externalId);
  if (body.household_id !== undefined) {
    prepared.found.push({
      param: column,
      code: 'not_allowed',
      message: 'name the household once: by household_id or household_external_id',
    });
    prepared.covered.push('household_id');
    delete body.household_id;
  } else if (id !== undefined) {
    body.household_id = id;
    prepared.namedBy.household_id = column;
  } else if (earlierRow !== undefined && earlierRow.row < prepared.row) {
    if (earlierRow.matched !== undefined) body.household_id = earlierRow.matched;
    else prepared.household = earlierRow;
    prepared.namedBy.household_id = column;
  } else {
    prepared.found.push(notFound(column, 'donor'));
    prepared.covered.push('household_id');
  }
}

/**
 * The first donor row of the file, up to the chunk's last row, of each external id the chunk's
 * rows name as their household and no donor has yet: one query over the stored file. Any role
 * counts, as that row will be a donor of its role when the member's row is written, so that a
 * row naming an Organization of the file is refused as one naming an existing Organization
 * (`invalid_value`); a row whose role is none of the roles will be no donor, so is not one.
 */
async function householdRowsOfFile(
  db: DatabaseTransactionConnection,
  imp: ImportRow,
  file: FileRow,
  externalIds: string[],
  lastRow: number,
): Promise<Map<string, EarlierDonor>> {
  const role = cellOfFile(file, 'role');
  const externalId = cellOfFile(file, 'external_id');
  const email = cellOfFile(file, 'email') ?? sql.fragment`NULL`;
  if (!externalIds.length || !role || !externalId) return new Map();
  const rows = await db.any(sql.type(
    z.object({
      externalId: z.string(),
      row: z.number(),
      role: z.string(),
      email: z.string().nullable(),
    }),
  )`
    SELECT DISTINCT ON (1) trim(${externalId}) AS "externalId",
           c.first_row + r.ordinality::int - 1 AS row, ${role} AS role,
           nullif(lower(trim(${email})), '') AS email
    FROM import_chunks c CROSS JOIN LATERAL json_array_elements(c.rows) WITH ORDINALITY AS r
    WHERE c.institution_id = ${imp.institution_id} AND c.file_id = ${imp.file_id}
      AND c.first_row <= ${lastRow} AND ${role} = ANY(${sql.array([...donorRoles], 'text')})
      AND trim(${externalId}) = ANY(${sql.array(externalIds, 'text')})
    ORDER BY 1, 2`);
  const matched =
    imp.on_match === 'error'
      ? new Map<string, number>()
      : new Map(
          (
            await donorsByEmail(
              db,
              imp.institution_id,
              distinct(rows.map((row) => row.email ?? undefined)),
            )
          ).map((row) => [row.key, row.id]),
        );
  return new Map(
    rows.map((row) => [row.externalId, { ...row, matched: matched.get(row.email ?? '') }]),
  );
}

/** A donor row that matches an existing donor (by external_id, else email) follows on_match. */
function matchDonor(
  body: JsonObject,
  found: Lookups,
  onMatch: ImportRow['on_match'],
  prepared: Prepared,
): void {
  const externalId = text(body.external_id);
  const email = text(body.email)?.toLowerCase();
  const match =
    (externalId !== undefined ? found.byExternalId.get(externalId) : undefined) ??
    (email !== undefined ? found.byEmail.get(email) : undefined);
  // `error`: the create itself answers already_in_use, as POST /donors does.
  if (match === undefined || onMatch === 'error') return;
  if (onMatch === 'skip') prepared.command = null;
  else {
    prepared.command = updateDonorCommand;
    prepared.params = { id: String(match) };
  }
}

/** A chunk's rows, each with the write that judges it and the ids its names stand for. */
export type { Prepared };

export async function prepareChunk(
  db: DatabaseTransactionConnection,
  imp: ImportRow,
  file: FileRow,
  raw: JsonValue[],
  firstRow: number,
): Promise<Prepared[]> {
  const rows = bodiesOf(file, imp.resource, raw);
  const found = await lookups(
    db,
    imp.institution_id,
    rows.map((row) => row?.body ?? null),
  );
  const households =
    imp.resource === 'donors'
      ? await householdRowsOfFile(
          db,
          imp,
          file,
          distinct(rows.map((row) => text(row?.body.household_external_id))).filter(
            (externalId) => !found.byExternalId.has(externalId),
          ),
          firstRow + raw.length - 1,
        )
      : new Map<string, EarlierDonor>();
  return rows.map((row, index) => {
    const body = row?.body ?? null;
    const prepared: Prepared = {
      row: firstRow + index,
      command: imp.resource === 'donors' ? createDonor : createGift,
      params: {},
      body: body ?? {},
      found: [...(row?.problems ?? [])],
      covered: [],
      namedBy: { ...row?.columnOf },
      household: null,
    };
    if (body === null) {
      prepared.found.push({
        param: null,
        code: 'invalid_type',
        message: 'A row must be a JSON object.',
      });
      prepared.command = null;
      return prepared;
    }
    if (imp.resource === 'gifts') {
      resolveDesignations(body, found, prepared);
      resolveGiftDonor(body, found, prepared);
      resolveCoding(body, found, prepared);
    } else {
      resolveHousehold(body, found, households, prepared);
      matchDonor(body, found, imp.on_match, prepared);
    }
    return prepared;
  });
}

export type RowOutcome =
  | {
      row: number;
      kind: 'written';
      command: Command;
      outcome: CommandOutcome;
      /** Other records the write changed as the spec names (a pledge its payment fulfilled). */
      consequences: readonly Consequence[];
    }
  | { row: number; kind: 'skipped' }
  | { row: number; kind: 'failed'; errors: RowError[] };

/** A command's refusal as the row's errors: the field errors of a 422, else the error itself. */
function errorsOf(command: Command, error: unknown): RowError[] {
  if (error instanceof ApiError)
    return (
      error.body.errors ?? [
        { param: error.body.param ?? null, code: error.body.code, message: error.body.message },
      ]
    );
  if (error instanceof IntegrityConstraintViolationError && error.constraint) {
    const meaning = command.constraints?.[error.constraint];
    if (meaning) {
      if (typeof meaning !== 'function') return [meaning];
      const refused = meaning();
      return [
        {
          param: refused.body.param ?? null,
          code: refused.body.code,
          message: refused.body.message,
        },
      ];
    }
  }
  throw error;
}

/** How a row runs: judged (a dry run), or written on its own savepoint, or written bare. */
export interface RunMode {
  dryRun: boolean;
  /**
   * Each real write in a savepoint of its own, so a row the database refuses (a race the checks
   * could not see) takes back only itself. Without: the caller runs the whole chunk in one
   * savepoint and runs it again row by row if any row fails.
   */
  savepoint: boolean;
  lookups: LookupCache;
}

/** The column an error's param stands for: `emails.1.address` is `emails.2.address` there. */
function columnOf(prepared: Prepared, param: string | null): string | null {
  if (param === null) return null;
  for (const [field, column] of Object.entries(prepared.namedBy))
    if (param === field || param.startsWith(`${field}.`))
      return `${column}${param.slice(field.length)}`;
  return param;
}

const donorId = z.object({ id: z.number() });

/** The donor a household row of the file became, by its external id; null when none is. */
async function householdOfFile(
  db: DatabaseTransactionConnection,
  institutionId: number,
  externalId: string,
): Promise<number | null> {
  return db.maybeOneFirst(sql.type(donorId)`
    SELECT id FROM donors WHERE institution_id = ${institutionId} AND external_id = ${externalId}`);
}

/** The answer of a judgement made in a savepoint that must not stay. */
class Judged extends Error {
  constructor(readonly outcome: CommandOutcome) {
    super('judged');
  }
}

/**
 * Judges a row that joins a household an earlier row of the file creates, before anything is
 * written: against the donor as that row will write it (a new donor of its role, a Household with
 * no members yet), put in a savepoint for the judgement and taken back with it. So the command
 * judges every rule of `household_id` itself, and a dry run says what the commit does.
 */
async function judgeJoining(
  db: DatabaseTransactionConnection,
  institutionId: number,
  prepared: Prepared,
  execute: (db: DatabaseTransactionConnection) => Promise<CommandOutcome>,
): Promise<CommandOutcome> {
  const { externalId, role } = prepared.household!;
  try {
    await db.transaction(async (inner) => {
      // Another write may have created it meanwhile: then that one is the household.
      const id =
        (await inner.maybeOneFirst(sql.type(donorId)`
          INSERT INTO donors (institution_id, role, last_name, external_id, status,
                              gives_anonymously)
          VALUES (${institutionId}, ${role}, ${externalId}, ${externalId}, 'active', false)
          ON CONFLICT DO NOTHING
          RETURNING id`)) ?? (await householdOfFile(inner, institutionId, externalId));
      prepared.body.household_id = id;
      throw new Judged(await execute(inner));
    });
  } catch (error) {
    if (error instanceof Judged) return error.outcome;
    throw error;
  }
  throw new Error('a judgement in a savepoint ended without its answer');
}

/** Judges (dry run) or writes one row with the command of the single-record write. */
export async function runRow(
  db: DatabaseTransactionConnection,
  institution: Institution,
  prepared: Prepared,
  mode: RunMode,
): Promise<RowOutcome> {
  const { row, command } = prepared;
  if (!command)
    return prepared.found.length
      ? { row, kind: 'failed', errors: prepared.found }
      : { row, kind: 'skipped' };
  if (prepared.household !== null && !mode.dryRun) {
    // Found afresh on every run: a chunk run again row by row writes the household anew.
    const id = await householdOfFile(db, institution.id, prepared.household.externalId);
    if (id === null)
      return {
        row,
        kind: 'failed',
        errors: [...prepared.found, notFound('household_external_id', 'donor')],
      };
    prepared.body.household_id = id;
  }
  const request = { params: prepared.params, body: prepared.body };
  const now = new Date().toISOString();
  // The row's own: a row that fails takes back its consequences with its write.
  const consequences: Consequence[] = [];
  // A row whose names found nothing (while writing: a household or donor whose external id
  // changed since the row was judged) fails whatever its command says, so it is only judged:
  // written, it would stay behind a failed row, without its event.
  const dryRun = mode.dryRun || prepared.found.length > 0;
  const context = { institution, dryRun, now, lookups: mode.lookups, consequences };
  try {
    const outcome =
      prepared.household !== null && mode.dryRun
        ? await judgeJoining(db, institution.id, prepared, (inner) =>
            command.execute({ db: inner, ...context }, request),
          )
        : dryRun || !mode.savepoint
          ? await command.execute({ db, ...context }, request)
          : await db.transaction((inner) => command.execute({ db: inner, ...context }, request));
    if (prepared.found.length) return { row, kind: 'failed', errors: prepared.found };
    return { row, kind: 'written', command, outcome, consequences };
  } catch (error) {
    // Bare, a refusal after a statement failed leaves the transaction aborted: the caller redoes.
    if (!dryRun && !mode.savepoint) throw error;
    const covered = (param: string | null) =>
      param !== null &&
      prepared.covered.some((field) => param === field || param.startsWith(`${field}.`));
    const own = errorsOf(command, error)
      .filter((problem) => !covered(problem.param))
      .map((problem) => ({ ...problem, param: columnOf(prepared, problem.param) }));
    return { row, kind: 'failed', errors: [...prepared.found, ...own] };
  }
}

const statusRow = z.object({ id: z.number(), status: z.string() });
const holderRow = z.object({ id: z.number(), value: z.string() });

const ids = (values: unknown[]) => [
  ...new Set(
    values.filter(
      (value): value is number =>
        typeof value === 'number' && Number.isSafeInteger(value) && value > 0,
    ),
  ),
];

const listOf = (value: JsonValue | undefined): JsonObject[] =>
  Array.isArray(value) ? value.filter(isJsonObject) : [];

/**
 * Reads ahead, in one query per table, the records a chunk's rows name and the holders of the
 * unique values they carry, so the checks of each row's command answer from memory
 * (CommandContext.lookups). A real write takes the locks the checks would (FOR KEY SHARE) in
 * the same queries. What a row names that was not read ahead is simply asked by the check.
 */
export async function readAhead(
  db: DatabaseTransactionConnection,
  imp: ImportRow,
  rows: readonly Prepared[],
  dryRun: boolean,
): Promise<LookupCache> {
  const lock = dryRun ? sql.fragment`` : sql.fragment`ORDER BY id FOR KEY SHARE`;
  const bodies = rows.filter((row) => row.command).map((row) => row.body);
  const statuses = new Map<string, Map<number, string>>();
  const holders = new Map<string, Map<string, number[]>>();
  const read = async (table: string, wanted: number[], status: boolean) => {
    if (!wanted.length) return;
    const found = await db.any(sql.type(statusRow)`
      SELECT id, ${status ? sql.fragment`status` : sql.fragment`'active'`} AS status
      FROM ${sql.identifier([table])}
      WHERE institution_id = ${imp.institution_id} AND id = ANY(${sql.array(wanted, 'int8')})
      ${lock}`);
    const known = new Map(wanted.map((id) => [id, null as unknown as string]));
    for (const row of found) known.set(row.id, row.status);
    statuses.set(table, known);
  };
  const readHolders = async (column: 'email' | 'external_id', ignoreCase: boolean) => {
    const values = [
      ...new Set(
        bodies
          .map((body) => body[column])
          .filter((value): value is string => typeof value === 'string' && value.trim() !== '')
          .map((value) => (ignoreCase ? value.trim().toLowerCase() : value.trim())),
      ),
    ];
    if (!values.length) return;
    const held = ignoreCase ? sql.fragment`lower(email)` : sql.identifier([column]);
    const found = await db.any(sql.type(holderRow)`
      SELECT id, ${held} AS value FROM donors
      WHERE institution_id = ${imp.institution_id} AND ${held} = ANY(${sql.array(values, 'text')})`);
    const byValue = new Map(values.map((value) => [value, [] as number[]]));
    for (const row of found) byValue.get(row.value)?.push(row.id);
    holders.set(`donors.${column}`, byValue);
  };
  if (imp.resource === 'gifts') {
    await read(
      'donors',
      ids(
        bodies.flatMap((body) => [
          body.donor_id,
          ...listOf(body.soft_credits).map((credit) => credit.donor_id),
          isJsonObject(body.tribute) ? body.tribute.honoree_donor_id : undefined,
        ]),
      ),
      false,
    );
    await read(
      'funds',
      ids(
        bodies.flatMap((body) => [
          body.fund_id,
          ...listOf(body.designations).map((part) => part.fund_id),
        ]),
      ),
      true,
    );
    // A line's own codes win over the gift's (fundraising.md §3): both are read.
    for (const [table, field] of [
      ['campaigns', 'campaign_id'],
      ['appeals', 'appeal_id'],
    ] as const)
      await read(
        table,
        ids(
          bodies.flatMap((body) => [
            body[field],
            ...listOf(body.designations).map((part) => part[field]),
          ]),
        ),
        true,
      );
  } else {
    await read('users', ids(bodies.map((body) => body.assigned_user_id)), true);
    await read(
      'tags',
      ids(bodies.flatMap((body) => (Array.isArray(body.tag_ids) ? body.tag_ids : []))),
      false,
    );
    await readHolders('email', true);
    await readHolders('external_id', false);
  }
  return {
    status: (table, id) => {
      const known = statuses.get(table);
      if (!known?.has(id)) return undefined;
      return known.get(id) ?? null;
    },
    holders: (table, column, value) => holders.get(`${table}.${column}`)?.get(value.trim()),
  };
}

/**
 * The events of a chunk's written records, as one insert into the outbox: each record's own, as
 * the single write's (its `eventObject` when the answer is not the record), then its
 * consequences' (`pledge.fulfilled`), as POST /gifts commits them.
 */
export async function insertRecordEvents(
  db: DatabaseTransactionConnection,
  imp: ImportRow,
  written: Extract<RowOutcome, { kind: 'written' }>[],
): Promise<void> {
  if (!written.length) return;
  const events = written.flatMap(({ command, outcome, consequences }): OutboxEvent[] => {
    const { type, objectType } = eventTypeOf(command.name);
    const record = outcome.eventObject ?? outcome.body;
    const asked = {
      institutionId: imp.institution_id,
      requestId: imp.request_id,
      apiKeyId: imp.api_key_id,
    };
    return [
      {
        ...asked,
        type,
        objectType,
        objectId: record.id as number,
        data: record,
        previousAttributes: outcome.previous
          ? previousAttributes(outcome.previous, outcome.body)
          : null,
      },
      ...consequences.map((consequence) => {
        const happened = consequenceTypeOf(consequence.objectType, consequence.happened);
        return {
          ...asked,
          type: happened.type,
          objectType: happened.objectType,
          objectId: consequence.object.id,
          data: consequence.object,
          previousAttributes: null,
        };
      }),
    ];
  });
  await insertEvents(db, events);
}

/**
 * The donor rows of a chunk whose donor has candidates now that the chunk is written (the
 * triggers on donors made its pairs in this transaction): GET /imports/{id}/duplicates.
 */
export async function insertRowDuplicates(
  db: DatabaseTransactionConnection,
  imp: ImportRow,
  written: Extract<RowOutcome, { kind: 'written' }>[],
): Promise<void> {
  if (imp.resource !== 'donors' || !written.length) return;
  const rows = written.map(({ row, outcome }) => ({ row_number: row, donor_id: outcome.body.id }));
  await db.query(sql.unsafe`
    INSERT INTO import_row_duplicates (institution_id, import_id, row_number, donor_id)
    SELECT ${imp.institution_id}, ${imp.id}, r.row_number, r.donor_id
    FROM jsonb_to_recordset(${sql.jsonb(rows)}) AS r(row_number int, donor_id bigint)
    WHERE EXISTS (
      SELECT FROM duplicate_pairs AS p
      WHERE p.institution_id = ${imp.institution_id} AND p.dismissed_at IS NULL
        AND (p.donor_id = r.donor_id OR p.other_donor_id = r.donor_id))
    ON CONFLICT (institution_id, import_id, row_number) DO NOTHING`);
}

/** A chunk's failed rows, each once (a row refused again keeps its first errors). */
export async function insertRowErrors(
  db: DatabaseTransactionConnection,
  imp: ImportRow,
  failed: Extract<RowOutcome, { kind: 'failed' }>[],
): Promise<void> {
  if (!failed.length) return;
  const rows = failed.map((outcome) => ({
    row_number: outcome.row,
    errors: outcome.errors.slice(0, MAX_ROW_ERRORS),
  }));
  await db.query(sql.unsafe`
    INSERT INTO import_row_errors (institution_id, import_id, row_number, errors)
    SELECT ${imp.institution_id}, ${imp.id}, r.row_number, r.errors
    FROM jsonb_to_recordset(${sql.jsonb(rows)}) AS r(row_number int, errors jsonb)
    ON CONFLICT (institution_id, import_id, row_number) DO NOTHING`);
}

const insertedRow = z.object({
  id: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** Whether every record a single-statement create names is usable, as its command would judge. */
async function referencesHold(
  db: DatabaseTransactionConnection,
  institution: Institution,
  now: string,
  lookups: LookupCache,
  create: SingleStatementCreate,
): Promise<boolean> {
  const ctx = { db, institution, dryRun: false, now, lookups };
  for (const { reference, ids } of create.judged?.references ?? []) {
    const entries = ids.map((id) => ({ id, param: reference.table }));
    if ((await checkReferencesAt(ctx, reference, entries)).length) return false;
  }
  return true;
}

/** Rows per insert statement: large enough to save the round trips, no larger. */
const INSERTS_PER_STATEMENT = 1_000;

/**
 * Writes a chunk's rows: those whose command can state its create as one statement (a gift
 * that names no pledge, recurring gift or matched gift: `Command.singleStatement`, the path
 * `POST /gifts` takes) are judged by the command's rules that need no lookup and by its
 * reference checks, answered from what the chunk read and locked ahead (the judge phase ran the
 * full command on every row; this re-checks what may have changed since), then inserted many to
 * a statement; the others are written one by one by the command.
 * Null when any row is refused: the caller then writes the chunk row by row, which says why.
 */
export async function writeBatched(
  db: DatabaseTransactionConnection,
  institution: Institution,
  rows: readonly Prepared[],
  lookups: LookupCache,
): Promise<RowOutcome[] | null> {
  const now = new Date().toISOString();
  const outcomes: (RowOutcome | null)[] = rows.map(() => null);
  const batched: { index: number; create: SingleStatementCreate; command: Command }[] = [];
  for (const [index, row] of rows.entries()) {
    const create =
      row.command && !row.found.length
        ? row.command.singleStatement?.(
            { institution, dryRun: false, now },
            { params: row.params, body: row.body },
          )
        : null;
    // The create is null unless every rule that needs no lookup passed; what is left of the
    // command's judgement is its references, checked here as the command checks them (from what
    // the chunk read and locked ahead), so the statement needs no guard of its own.
    // A hinted rate needs the guard of the one-statement write, which these inserts have not:
    // such a row is written by its command.
    const judged = create?.judged && !create.judged.rate ? create.judged : null;
    if (judged && !(await referencesHold(db, institution, now, lookups, create!))) return null;
    if (judged && row.command) batched.push({ index, create: create!, command: row.command });
    else {
      const outcome = await runRow(db, institution, row, {
        dryRun: false,
        savepoint: false,
        lookups,
      });
      if (outcome.kind === 'failed') return null;
      outcomes[index] = outcome;
    }
  }
  for (let start = 0; start < batched.length; start += INSERTS_PER_STATEMENT) {
    const group = batched.slice(start, start + INSERTS_PER_STATEMENT);
    const { table } = group[0]!.create.judged!;
    const inserted = await db.any(
      sql.type(insertedRow)`${insertRowsFragment(
        table,
        institution.id,
        group.map((item) => item.create.judged!.fields),
      )}`,
    );
    if (inserted.length !== group.length) return null;
    inserted.forEach((assigned, member) => {
      const item = group[member]!;
      outcomes[item.index] = {
        row: rows[item.index]!.row,
        kind: 'written',
        command: item.command,
        consequences: [],
        outcome: {
          status: 201,
          body: item.create.present({ ...item.create.fields, ...assigned }),
          location: `${item.create.path}/${assigned.id}`,
        },
      };
    });
  }
  return outcomes.filter((outcome): outcome is RowOutcome => outcome !== null);
}
