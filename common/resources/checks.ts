import { sql } from 'slonik';
import { z } from 'zod';
import type { CommandContext } from '../commands/command.js';
import type { RecordCheck } from '../commands/resourceCommands.js';
import type { FieldError } from '../errors.js';
import type { Reference } from './reference.js';

export type { Reference } from './reference.js';

const referenceStatus = z.object({ id: z.coerce.number(), status: z.string() });

const withoutArticle = (noun: string) => noun.replace(/^an? /, '');

/** A real write holds referenced rows until it commits, so a concurrent change waits for it. */
const keyShare = (ctx: CommandContext) =>
  // A read-only dry run cannot lock, and needs no lock.
  ctx.dryRun ? sql.fragment`` : sql.fragment`FOR KEY SHARE`;

/**
 * A reference must name a record of the caller's institution (else `reference_not_found`, the
 * same answer for missing and foreign) that is still in use (else the reference's own code).
 */
export async function checkReference(
  ctx: CommandContext,
  reference: Reference,
  id: number,
  param: string,
): Promise<FieldError | null> {
  const rule = reference.unusable;
  const readAhead = ctx.lookups?.status(reference.table, id);
  const status =
    readAhead !== undefined
      ? readAhead
      : await ctx.db.maybeOneFirst(sql.unsafe`
    SELECT ${rule ? sql.fragment`status` : sql.fragment`'active'`} AS status
    FROM ${sql.identifier([reference.table])}
    WHERE institution_id = ${ctx.institution.id} AND id = ${id} ${keyShare(ctx)}`);
  if (status === null)
    return {
      param,
      code: 'reference_not_found',
      message: `does not name an existing ${withoutArticle(reference.noun)}`,
    };
  if (rule?.statuses.includes(String(status))) {
    return {
      param,
      code: rule.code,
      message: `names ${reference.noun} that is ${String(status)}`,
    };
  }
  return null;
}

/**
 * References at several places of a body (`designations.0.fund_id`, `designations.1.fund_id`),
 * checked and locked in one query, each answered as checkReference answers one.
 */
export async function checkReferencesAt(
  ctx: CommandContext,
  reference: Reference,
  entries: readonly { id: number; param: string }[],
): Promise<FieldError[]> {
  if (!entries.length) return [];
  const rule = reference.unusable;
  const readAhead = entries.map((entry) => ctx.lookups?.status(reference.table, entry.id));
  const rows = !readAhead.includes(undefined)
    ? entries.map((entry, index) => ({ id: entry.id, status: readAhead[index] }))
    : await ctx.db.any(sql.type(referenceStatus)`
    SELECT id, ${rule ? sql.fragment`status` : sql.fragment`'active'`} AS status
    FROM ${sql.identifier([reference.table])}
    WHERE institution_id = ${ctx.institution.id}
      AND id = ANY(${sql.array(
        entries.map((entry) => entry.id),
        'int8',
      )})
    ORDER BY id ${keyShare(ctx)}`);
  const statusOf = new Map(rows.map((row) => [row.id, row.status]));
  return entries.flatMap(({ id, param }): FieldError[] => {
    const status = statusOf.get(id);
    if (status === undefined || status === null)
      return [
        {
          param,
          code: 'reference_not_found',
          message: `does not name an existing ${withoutArticle(reference.noun)}`,
        },
      ];
    if (rule?.statuses.includes(status))
      return [{ param, code: rule.code, message: `names ${reference.noun} that is ${status}` }];
    return [];
  });
}

/**
 * A list of references (`tag_ids`), checked in one query but for the ids in `unchanged` (held
 * already, so neither checked nor locked again): each id that names no record of the
 * institution is `reference_not_found` at its index (`tag_ids.2`).
 */
export async function checkReferenceList(
  ctx: CommandContext,
  reference: Reference,
  ids: readonly number[],
  param: string,
  unchanged: ReadonlySet<number> = new Set(),
): Promise<FieldError[]> {
  const checked = ids.filter((id) => !unchanged.has(id));
  if (!checked.length) return [];
  const readAhead = checked.map((id) => ctx.lookups?.status(reference.table, id));
  const found = !readAhead.includes(undefined)
    ? checked.filter((_id, index) => readAhead[index] !== null)
    : await ctx.db.anyFirst(sql.unsafe`
    SELECT id FROM ${sql.identifier([reference.table])}
    WHERE institution_id = ${ctx.institution.id} AND id = ANY(${sql.array(checked, 'int8')})
    ORDER BY id ${keyShare(ctx)}`);
  const present = new Set(found.map(Number));
  return ids.flatMap((id, index) =>
    present.has(id) || unchanged.has(id)
      ? []
      : [
          {
            param: `${param}.${index}`,
            code: 'reference_not_found' as const,
            message: `does not name an existing ${withoutArticle(reference.noun)}`,
          },
        ],
  );
}

/**
 * A value unique within an institution, compared as its unique index compares it: emails, cycle
 * names and student numbers case-insensitively (indexed on lower()), fund codes exactly.
 */
export interface UniqueValue {
  table: string;
  column: string;
  ignoreCase: boolean;
  /** Who else may hold it, for the message (`is already used by another donor`). */
  what: string;
}

/** Whether another record of the institution already holds this value (the record itself aside). */
function isTaken(
  ctx: CommandContext,
  unique: UniqueValue,
  value: string,
  exceptId: number | null,
): Promise<boolean> {
  const readAhead = ctx.lookups?.holders(
    unique.table,
    unique.column,
    unique.ignoreCase ? value.toLowerCase() : value,
  );
  if (readAhead) return Promise.resolve(readAhead.some((id) => id !== exceptId));
  const held = sql.identifier([unique.column]);
  const matches = unique.ignoreCase
    ? sql.fragment`lower(${held}) = lower(${value})`
    : sql.fragment`${held} = ${value}`;
  return ctx.db.exists(sql.unsafe`
    SELECT 1 FROM ${sql.identifier([unique.table])}
    WHERE institution_id = ${ctx.institution.id} AND ${matches} AND id IS DISTINCT FROM ${exceptId}`);
}

export const alreadyInUse = (param: string, what: string): FieldError => ({
  param,
  code: 'already_in_use',
  message: `is already used by another ${what}`,
});

/** A field sent with a valid value that another record of the institution holds: already_in_use. */
export async function checkUnique(
  ctx: CommandContext,
  check: RecordCheck<{ id: number }>,
  unique: UniqueValue,
): Promise<void> {
  const param = unique.column;
  if (!check.validation.sent.has(param) || !check.valid(param)) return;
  const value = String(check.record[param]);
  if (await isTaken(ctx, unique, value, check.existing?.id ?? null)) {
    check.validation.errors.push(alreadyInUse(param, unique.what));
  }
}
