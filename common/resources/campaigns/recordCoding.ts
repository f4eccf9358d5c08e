import { sql, type ValueExpression } from 'slonik';
import { z } from 'zod';
import type { CommandContext } from '../../commands/command.js';
import type { RecordCheck } from '../../commands/resourceCommands.js';
import type { FieldError } from '../../errors.js';
import { recordId } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import { codingOf, type CodedLine } from './coding.js';

/**
 * The codes of a record (a gift, a pledge, a recurring gift) or of one of its designations
 * (fundraising.md §3). A designation that carries a code is coded by its own pair, which wins
 * over the record's.
 */
export interface Codes {
  campaign_id: number | null;
  appeal_id: number | null;
}

/** The request fields of a record's codes. */
export const codeShape: Shape = {
  campaign_id: { schema: recordId, nullable: true },
  appeal_id: { schema: recordId, nullable: true },
};

export const codeDefaults = { campaign_id: null, appeal_id: null } as const;

/** A designation's codes in a request: each optional, null meaning "the record's". */
export const designationCodes = {
  campaign_id: recordId.nullable().optional(),
  appeal_id: recordId.nullable().optional(),
};

/** A designation's codes as stored in its jsonb part: a key only when the part has its own. */
export const storedDesignationCodes = {
  campaign_id: z.number().nullable().optional(),
  appeal_id: z.number().nullable().optional(),
};

interface CodedPart {
  campaign_id?: number | null | undefined;
  appeal_id?: number | null | undefined;
}

/**
 * The codes a part is coded to: its own pair when it carries either code (a designation coded
 * only to an appeal counts toward that appeal's campaign, not the record's), else the record's.
 */
export const codesOfPart = (part: CodedPart, record: Codes): Codes =>
  part.campaign_id == null && part.appeal_id == null
    ? record
    : { campaign_id: part.campaign_id ?? null, appeal_id: part.appeal_id ?? null };

/** The part's own codes, as stored: absent keys for the codes it takes from its record. */
export const ownCodes = (part: CodedPart): Partial<Codes> => ({
  ...(part.campaign_id == null ? {} : { campaign_id: part.campaign_id }),
  ...(part.appeal_id == null ? {} : { appeal_id: part.appeal_id }),
});

/** The part's codes as answered: null for a code it takes from its record. */
export const presentCodes = (part: CodedPart): Codes => ({
  campaign_id: part.campaign_id ?? null,
  appeal_id: part.appeal_id ?? null,
});

/** The effective codes of a record's lines, for the arrays its filters and deletes read. */
export interface LineCodes {
  campaign_ids: number[];
  appeal_ids: number[];
}

export const noLineCodes: LineCodes = { campaign_ids: [], appeal_ids: [] };

/** Where a record keeps its effective line codes until its store writes them. */
const LINE_CODES = 'line_codes';

/** The line codes the rules settled on the record (none when they did not get that far). */
export const lineCodesOf = (record: Record<string, unknown>): LineCodes =>
  (record[LINE_CODES] as LineCodes | undefined) ?? noLineCodes;

/**
 * Leaves a record's effective line codes for its store, when they were settled without
 * checkRecordCoding (a gift coded in one statement, whose guard judges its codes).
 */
export const settleLineCodes = (record: Record<string, unknown>, codes: LineCodes): void => {
  record[LINE_CODES] = codes;
};

/** Every code a stored record carries: what it keeps even once closed. */
export function heldCodes(
  record: (Codes & LineCodes & { designations: readonly CodedPart[] }) | null,
  more: readonly (CodedPart | null)[] = [],
): { campaigns: Set<number>; appeals: Set<number> } {
  const parts: CodedPart[] = [...(record ? [record, ...record.designations] : []), ...more].filter(
    (part): part is CodedPart => part !== null,
  );
  return {
    campaigns: new Set([
      ...parts.flatMap((part) => part.campaign_id ?? []),
      ...(record?.campaign_ids ?? []),
    ]),
    appeals: new Set([
      ...parts.flatMap((part) => part.appeal_id ?? []),
      ...(record?.appeal_ids ?? []),
    ]),
  };
}

const sortedUnique = (ids: readonly (number | null)[]) =>
  [...new Set(ids.filter((id): id is number => id !== null))].sort((a, b) => a - b);

/**
 * Judges the codes of a record and of its designations (`record.designations`, as
 * checkDesignations settled them) with codingOf, and leaves their effective codes on the record
 * for its store (lineCodesOf). A code the record already carries (`held`) may have closed since:
 * it stays valid on the record, as a fund does. A designation that carries no code of its own is
 * judged with the record's, at the record's params (codesOfPart).
 */
export async function checkRecordCoding(
  ctx: CommandContext,
  check: RecordCheck<object>,
  held: { campaigns: Set<number>; appeals: Set<number> },
): Promise<void> {
  const { record, validation } = check;
  if (validation.invalid.has('campaign_id') || validation.invalid.has('appeal_id')) return;
  const own: Codes = {
    campaign_id: (record.campaign_id ?? null) as number | null,
    appeal_id: (record.appeal_id ?? null) as number | null,
  };
  const parts = Array.isArray(record.designations) ? (record.designations as CodedPart[]) : [];
  const recordLine: CodedLine = { ...own, campaignParam: 'campaign_id', appealParam: 'appeal_id' };
  const partLines = parts.map((part, index): CodedLine => {
    const codes = codesOfPart(part, own);
    const coded = codes !== own;
    return {
      ...codes,
      campaignParam: coded ? `designations.${index}.campaign_id` : 'campaign_id',
      appealParam: coded ? `designations.${index}.appeal_id` : 'appeal_id',
    };
  });
  const lines = [recordLine, ...partLines];
  if (lines.every((line) => line.campaign_id === null && line.appeal_id === null)) {
    record[LINE_CODES] = noLineCodes;
    return;
  }
  const { errors, campaignIds } = await codingOf(ctx, lines);
  const idAt = new Map<string, { kind: 'campaign' | 'appeal'; id: number | null }>();
  for (const line of lines) {
    idAt.set(line.campaignParam, { kind: 'campaign', id: line.campaign_id });
    idAt.set(line.appealParam, { kind: 'appeal', id: line.appeal_id });
  }
  const stillHeld = (error: FieldError) => {
    if (error.code !== 'reference_inactive') return false;
    const at = idAt.get(error.param);
    if (!at || at.id === null) return false;
    return (at.kind === 'campaign' ? held.campaigns : held.appeals).has(at.id);
  };
  const seen = new Set<string>();
  for (const error of errors) {
    const key = `${error.param} ${error.code}`;
    if (seen.has(key) || stillHeld(error)) continue;
    seen.add(key);
    validation.errors.push(error);
  }
  // The lines that count: the designations, or the record itself when it has none.
  const counted = partLines.length ? partLines : [recordLine];
  const effective = partLines.length ? campaignIds.slice(1) : campaignIds.slice(0, 1);
  record[LINE_CODES] = {
    campaign_ids: sortedUnique(effective),
    appeal_ids: sortedUnique(counted.map((line) => line.appeal_id)),
  } satisfies LineCodes;
}

/** The line-code arrays and the record's codes as a table's writeAs states them. */
export const codeWriteAs = {
  campaign_id: (id: unknown) => sql.fragment`${id as number | null}::bigint`,
  appeal_id: (id: unknown) => sql.fragment`${id as number | null}::bigint`,
  campaign_ids: (ids: unknown) => sql.array(ids as number[], 'int8'),
  appeal_ids: (ids: unknown) => sql.array(ids as number[], 'int8'),
} satisfies Record<string, (value: unknown) => ValueExpression>;

/** The stored codes of a record's row. */
export const codeRow = {
  campaign_id: z.number().nullable(),
  appeal_id: z.number().nullable(),
  campaign_ids: z.array(z.number()),
  appeal_ids: z.array(z.number()),
};

/** A record-level code's foreign key, tripped by a code deleted after it was judged. */
export const codeGone = (param: 'campaign_id' | 'appeal_id', noun: string): FieldError => ({
  param,
  code: 'reference_not_found',
  message: `does not name an existing ${noun}`,
});

/** What a record refers to through a code: a campaign or an appeal. */
export type CodeTable = 'campaigns' | 'appeals';

/**
 * Whether any gift, pledge or recurring gift is coded to the campaign or appeal: by its own
 * code or by one of its lines'. Read by the caller under the code's row lock (FOR UPDATE), which
 * a write coding a line to it must wait for (it holds the row FOR KEY SHARE).
 */
export function codeInUse(ctx: CommandContext, table: CodeTable, id: number): Promise<boolean> {
  const column = sql.identifier([table === 'campaigns' ? 'campaign_id' : 'appeal_id']);
  const array = sql.identifier([table === 'campaigns' ? 'campaign_ids' : 'appeal_ids']);
  const coded = (records: string) => sql.fragment`EXISTS (SELECT 1 FROM ${sql.identifier([records])}
      WHERE institution_id = ${ctx.institution.id}
        AND (${column} = ${id} OR (${array} <> '{}' AND ${array} @> ARRAY[${id}::bigint])))`;
  return ctx.db.oneFirst(sql.type(z.object({ used: z.boolean() }))`
    SELECT ${coded('gifts')} OR ${coded('pledges')} OR ${coded('recurring_gifts')} AS used`);
}

/** The words of the document on a record's codes, shared by gifts, pledges and recurring gifts. */
export const codeNotes = {
  campaign_id:
    'The campaign the record is coded to, the default of its lines: a campaign of the institution (422 `reference_not_found`, the same for another institution’s), active when newly set (422 `reference_inactive`). Null for none.',
  appeal_id:
    'The appeal the record is coded to, the default of its lines: an appeal of the institution, active when newly set, and of the line’s campaign when both are set (422 `invalid_value`). Null for none.',
};

/** The rule paragraph on codes; `payments` says what the record's payments take from it. */
export const codeRule = (payments: string) =>
  `**Campaign and appeal codes** (fundraising.md §3). The record takes \`campaign_id\` and \`appeal_id\`, and each designation may carry its own \`campaign_id\` and \`appeal_id\`: a designation that carries either is coded by its own pair (its missing one is none), one that carries neither takes the record’s. A line coded only to an appeal counts toward the appeal’s campaign. A code must name a campaign or an appeal of the institution (422 \`reference_not_found\` at \`campaign_id\` or \`designations.N.campaign_id\`, the same for another institution’s) that is active when newly set (422 \`reference_inactive\`; a record keeps a code that closed since); an appeal of another campaign than its line’s is 422 \`invalid_value\` at the appeal. Codes are not money: they may change by PATCH whatever the record’s money history. ${payments}`;
