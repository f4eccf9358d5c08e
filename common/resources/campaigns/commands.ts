import { deleted, type Command, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  findTarget,
  updateCommand,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors, type FieldError } from '../../errors.js';
import type { JsonObject } from '../../json.js';
import { rebuildCampaignTreeCounts } from './lines.js';
import { codeInUse } from './recordCoding.js';
import { alreadyInUse, checkReference, checkUnique, type Reference } from '../checks.js';
import { readOnlyOf } from '../responseFields.js';
import { presentCampaign } from './present.js';
import {
  ancestorIds,
  campaignDependents,
  deleteCampaign,
  lockCampaignTree,
  subtreeHeight,
} from './queries.js';
import { campaignResponse } from './response.js';
import {
  campaignDefaults,
  campaignIdentity,
  campaignShape,
  campaignTable,
  MAX_CAMPAIGN_DEPTH,
  type CampaignFields,
  type CampaignRow,
} from './schema.js';

/** A parent may be closed: closing a campaign closes none of the campaigns under it. */
const parentReference: Reference = { table: 'campaigns', noun: 'a campaign' };

/** `ends_on` on or after `starts_on` when both are set (YYYY-MM-DD strings compare as dates). */
export function checkDates({ record, validation, valid }: RecordCheck<object>): void {
  if (valid('starts_on') && valid('ends_on') && String(record.ends_on) < String(record.starts_on))
    validation.errors.push({
      param: 'ends_on',
      code: 'out_of_range',
      message: 'must be on or after starts_on',
    });
}

const parentProblem = (message: string): FieldError => ({
  param: 'parent_id',
  code: 'invalid_value',
  message,
});

/**
 * A new parent: a campaign of the institution (closed or not), neither the campaign itself nor
 * one below it, and no deeper than the tree allows once the campaign and its subtree hang under
 * it. A real write reaches here holding the tree's lock (lockCampaignTree), so the chain it reads
 * stays as read until it commits.
 */
async function checkParent(ctx: CommandContext, check: RecordCheck<CampaignRow>): Promise<void> {
  const { record, validation, existing } = check;
  if (!check.valid('parent_id')) return;
  const parentId = Number(record.parent_id);
  if (existing?.parent_id === parentId) return;
  if (existing?.id === parentId) {
    validation.errors.push(parentProblem('cannot name the campaign itself'));
    return;
  }
  const missing = await checkReference(ctx, parentReference, parentId, 'parent_id');
  if (missing) {
    validation.errors.push(missing);
    return;
  }
  const chain = await ancestorIds(ctx.db, ctx.institution.id, parentId);
  if (existing && chain.includes(existing.id)) {
    validation.errors.push(
      parentProblem(`names campaign ${parentId}, which is below this campaign (a cycle)`),
    );
    return;
  }
  const height = existing ? await subtreeHeight(ctx.db, ctx.institution.id, existing.id) : 1;
  if (chain.length + height > MAX_CAMPAIGN_DEPTH)
    validation.errors.push(
      parentProblem(`would make the campaign tree deeper than ${MAX_CAMPAIGN_DEPTH} levels`),
    );
}

async function campaignRules(ctx: CommandContext, check: RecordCheck<CampaignRow>): Promise<void> {
  await checkUnique(ctx, check, {
    table: 'campaigns',
    column: 'code',
    ignoreCase: true,
    what: 'campaign',
  });
  checkDates(check);
  await checkParent(ctx, check);
}

const campaignsResource: WritableResource<CampaignRow, CampaignFields> = {
  identity: campaignIdentity,
  table: campaignTable,
  shape: campaignShape,
  defaults: campaignDefaults,
  readOnly: readOnlyOf(campaignResponse, campaignShape),
  constraints: {
    campaigns_institution_code_key: alreadyInUse('code', 'campaign'),
    campaigns_parent_fkey: {
      param: 'parent_id',
      code: 'reference_not_found',
      message: 'does not name an existing campaign',
    },
  },
  rules: campaignRules,
  present: presentCampaign,
};

/** A body that places the campaign in the tree (under a parent, or at the top), and so may move it. */
const movesInTree = (body: JsonObject) => body.parent_id !== undefined;

/**
 * The generic write, under the tree's lock when it places the campaign in the tree. A move of a
 * campaign that already exists changes which campaigns are above its lines: the tree's gift and
 * donor counts are rebuilt in the same transaction (lines.ts).
 */
const underTreeLock = (command: Command, moves: boolean): Command => ({
  ...command,
  async execute(ctx, request) {
    const placed = !ctx.dryRun && movesInTree(request.body);
    if (placed) await lockCampaignTree(ctx.db, ctx.institution.id);
    const result = await command.execute(ctx, request);
    if (placed && moves) await rebuildCampaignTreeCounts(ctx.db, ctx.institution.id);
    return result;
  },
});

export const createCampaign = underTreeLock(createCommand(campaignsResource), false);
export const updateCampaignCommand = underTreeLock(updateCommand(campaignsResource), true);

const inUse = (what: string) =>
  errors.resourceInUse(`This campaign has ${what}; move or delete them first.`);

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

const codedInUse = () =>
  errors.resourceInUse(
    'Gifts, pledges or recurring gifts are coded to this campaign; recode them first.',
  );

/**
 * A campaign goes only when nothing points at it. The row is locked (FOR UPDATE) before the
 * count: a write placing a campaign or an appeal under it, or coding a gift line to it, holds it
 * FOR KEY SHARE, so it commits first and is counted, or checks after the delete and finds it gone.
 */
export const deleteCampaignCommand: Command = {
  name: `${campaignIdentity.name}.delete`,
  constraints: {
    campaigns_parent_fkey: () => inUse('child campaigns'),
    appeals_campaign_fkey: () => inUse('appeals'),
    gifts_campaign_fkey: () => codedInUse(),
    pledges_campaign_fkey: () => codedInUse(),
    recurring_gifts_campaign_fkey: () => codedInUse(),
  },
  async execute(ctx, request) {
    const existing = await findTarget(ctx, request, campaignsResource);
    const { children, appeals } = await campaignDependents(ctx.db, ctx.institution.id, existing.id);
    const held = [
      ...(children ? [count(children, 'child campaign', 'child campaigns')] : []),
      ...(appeals ? [count(appeals, 'appeal', 'appeals')] : []),
    ];
    if (held.length) throw inUse(held.join(' and '));
    if (await codeInUse(ctx, 'campaigns', existing.id)) throw codedInUse();
    if (!ctx.dryRun) await deleteCampaign(ctx.db, ctx.institution.id, existing.id);
    return deleted(campaignIdentity.object, existing.id);
  },
};
