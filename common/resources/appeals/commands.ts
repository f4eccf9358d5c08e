import { sql } from 'slonik';
import { deleted, type Command, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  findTarget,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import { checkDates } from '../campaigns/commands.js';
import { codeInUse } from '../campaigns/recordCoding.js';
import { campaignReference } from '../campaigns/schema.js';
import { alreadyInUse, checkReference, checkUnique } from '../checks.js';
import { readOnlyOf } from '../responseFields.js';
import { presentAppeal } from './present.js';
import { appealResponse } from './response.js';
import {
  appealDefaults,
  appealIdentity,
  appealShape,
  appealTable,
  type AppealFields,
  type AppealRow,
} from './schema.js';

/**
 * The code's uniqueness, the dates, and a campaign of the institution that is still active. The
 * campaign an appeal already has is not judged again: closing a campaign leaves its appeals as
 * they are.
 */
async function appealRules(ctx: CommandContext, check: RecordCheck<AppealRow>): Promise<void> {
  const { record, validation, existing } = check;
  await checkUnique(ctx, check, {
    table: 'appeals',
    column: 'code',
    ignoreCase: true,
    what: 'appeal',
  });
  checkDates(check);
  if (!check.valid('campaign_id')) return;
  const campaignId = (record.campaign_id ?? null) as number | null;
  if ((existing?.campaign_id ?? null) === campaignId) return;
  // A line coded only to the appeal counts toward the appeal's campaign, and a line's appeal is
  // of the line's campaign: moving a coded appeal would change what every such line says.
  if (existing && (await codeInUse(ctx, 'appeals', existing.id)))
    validation.errors.push({
      param: 'campaign_id',
      code: 'not_allowed',
      message:
        'cannot change: gifts, pledges or recurring gifts are coded to this appeal; recode them first',
    });
  if (campaignId === null) return;
  const problem = await checkReference(ctx, campaignReference, campaignId, 'campaign_id');
  if (problem) validation.errors.push(problem);
}

const appealsResource: WritableResource<AppealRow, AppealFields> = {
  identity: appealIdentity,
  table: appealTable,
  shape: appealShape,
  defaults: appealDefaults,
  readOnly: readOnlyOf(appealResponse, appealShape),
  constraints: {
    appeals_institution_code_key: alreadyInUse('code', 'appeal'),
    appeals_campaign_fkey: {
      param: 'campaign_id',
      code: 'reference_not_found',
      message: 'does not name an existing campaign',
    },
  },
  rules: appealRules,
  present: presentAppeal,
};

export const createAppeal = createCommand(appealsResource);
export const updateAppealCommand = updateCommand(appealsResource);

const codedInUse = () =>
  errors.resourceInUse(
    'Gifts, pledges or recurring gifts are coded to this appeal; recode them first.',
  );

/**
 * An appeal goes; its campaign stays. The row is locked (FOR UPDATE) first: a write coding a
 * line to it holds it FOR KEY SHARE, so the delete waits for that write to commit and then sees
 * it coded (409), or the write finds the appeal gone.
 */
export const deleteAppealCommand: Command = {
  name: `${appealIdentity.name}.delete`,
  constraints: {
    gifts_appeal_fkey: () => codedInUse(),
    pledges_appeal_fkey: () => codedInUse(),
    recurring_gifts_appeal_fkey: () => codedInUse(),
  },
  async execute(ctx, request) {
    const existing = await findTarget(ctx, request, appealsResource);
    if (await codeInUse(ctx, 'appeals', existing.id)) throw codedInUse();
    if (!ctx.dryRun)
      await ctx.db.query(sql.unsafe`
        DELETE FROM appeals WHERE institution_id = ${ctx.institution.id} AND id = ${existing.id}`);
    return deleted(appealIdentity.object, existing.id);
  },
};
