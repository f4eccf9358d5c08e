import { sql } from 'slonik';
import { z } from 'zod';
import type { CommandContext } from '../../commands/command.js';
import type { FieldError } from '../../errors.js';
import { appealReference } from '../appeals/schema.js';
import { checkReferencesAt } from '../checks.js';
import { hintAppealCampaign } from './hints.js';
import { lockCampaignTreeShared } from './queries.js';
import { campaignReference } from './schema.js';

/**
 * One coded line of a write (a gift, a designation, a pledge): its campaign and appeal as sent,
 * and where each sits in the body (`campaign_id`, `designations.2.appeal_id`).
 */
export interface CodedLine {
  campaign_id: number | null;
  appeal_id: number | null;
  campaignParam: string;
  appealParam: string;
}

/** What a line's appeal says about the line's campaign. */
export interface AppealOfLine {
  campaign_id: number | null;
}

/**
 * The campaign a line counts toward: its own, else its appeal's (a line coded only to an appeal
 * of campaign X counts toward X), else none.
 */
export const effectiveCampaign = (
  line: Pick<CodedLine, 'campaign_id'>,
  appeal: AppealOfLine | null,
): number | null => line.campaign_id ?? appeal?.campaign_id ?? null;

const appealCoding = z.object({
  id: z.coerce.number(),
  status: z.string(),
  campaign_id: z.coerce.number().nullable(),
});

export interface Coding {
  errors: FieldError[];
  /** Each line's effective campaign (effectiveCampaign), in the order of the lines. */
  campaignIds: (number | null)[];
}

/**
 * The coding of many lines, in two queries whatever their number: the appeals, then the
 * campaigns (the lines' own and those they take from their appeals). A real write holds every
 * row it found FOR KEY SHARE until it commits, as any reference does, so a campaign or an appeal
 * being deleted or closed meanwhile waits for it; the appeals are locked before the campaigns,
 * the order of an appeal's own write.
 *
 * - A campaign or appeal the institution does not have (or another institution's):
 *   `reference_not_found` at its param.
 * - A closed one: `reference_inactive`. A line with an appeal but no campaign takes the appeal's
 *   campaign, and if that campaign is closed the line is refused at the appeal's param.
 * - An appeal of another campaign than the line's own: `invalid_value` at the appeal's param. An
 *   appeal without a campaign fits any line.
 */
export async function codingOf(ctx: CommandContext, lines: readonly CodedLine[]): Promise<Coding> {
  const errors: FieldError[] = [];
  // The tree's shared lock before any campaign's row lock, as a move takes the lock before its
  // row: the write of the lines (writeGiftLines) takes it again, and must not wait for a move
  // that waits for a row held here.
  if (!ctx.dryRun && lines.some((line) => line.campaign_id !== null || line.appeal_id !== null))
    await lockCampaignTreeShared(ctx.db, ctx.institution.id);
  const appealIds = [...new Set(lines.flatMap((line) => line.appeal_id ?? []))];
  const appeals = appealIds.length
    ? await ctx.db.any(sql.type(appealCoding)`
        SELECT id, status, campaign_id FROM appeals
        WHERE institution_id = ${ctx.institution.id} AND id = ANY(${sql.array(appealIds, 'int8')})
        ORDER BY id ${ctx.dryRun ? sql.fragment`` : sql.fragment`FOR KEY SHARE`}`)
    : [];
  const appealOf = new Map(appeals.map((appeal) => [appeal.id, appeal]));
  for (const appeal of appeals)
    hintAppealCampaign(ctx.institution.id, appeal.id, appeal.campaign_id);
  // The appeals are read above with their campaigns, which checkReferencesAt does not read; it
  // judges them from that read, as it judges an import's read-ahead, so that an appeal is
  // answered in the words of every other reference.
  const appealErrors = await checkReferencesAt(
    {
      ...ctx,
      lookups: {
        status: (_table, id) => appealOf.get(id)?.status ?? null,
        holders: () => undefined,
      },
    },
    appealReference,
    lines.flatMap((line) =>
      line.appeal_id === null ? [] : [{ id: line.appeal_id, param: line.appealParam }],
    ),
  );
  errors.push(...appealErrors);
  const refused = new Set(appealErrors.map((error) => error.param));

  const campaignEntries: { id: number; param: string }[] = [];
  const campaignIds = lines.map((line) => {
    const appeal = line.appeal_id === null ? undefined : appealOf.get(line.appeal_id);
    if (line.campaign_id !== null)
      campaignEntries.push({ id: line.campaign_id, param: line.campaignParam });
    if (appeal && !refused.has(line.appealParam)) {
      if (line.campaign_id === null && appeal.campaign_id !== null)
        campaignEntries.push({ id: appeal.campaign_id, param: line.appealParam });
      else if (
        line.campaign_id !== null &&
        appeal.campaign_id !== null &&
        appeal.campaign_id !== line.campaign_id
      )
        errors.push({
          param: line.appealParam,
          code: 'invalid_value',
          message: `names an appeal of campaign ${appeal.campaign_id}, not of campaign ${line.campaign_id}`,
        });
    }
    return effectiveCampaign(line, appeal ?? null);
  });
  const campaignErrors = await checkReferencesAt(ctx, campaignReference, campaignEntries);
  const taken = new Set(
    lines.filter((line) => line.campaign_id === null).map((line) => line.appealParam),
  );
  // A campaign taken from the appeal is the appeal's problem: say so at the appeal's param.
  errors.push(
    ...campaignErrors.map((error) =>
      taken.has(error.param) && error.code === 'reference_inactive'
        ? { ...error, message: 'names an appeal whose campaign is closed' }
        : error,
    ),
  );
  return { errors, campaignIds };
}

/** The field errors of the lines' coding (codingOf), for a write's rules. */
export async function checkCoding(
  ctx: CommandContext,
  lines: readonly CodedLine[],
): Promise<FieldError[]> {
  return (await codingOf(ctx, lines)).errors;
}
