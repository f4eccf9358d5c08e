import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createCampaign, deleteCampaignCommand, updateCampaignCommand } from './commands.js';
import { campaignList } from './list.js';
import { presentCampaign } from './present.js';
import { campaignProgressView } from './progress.js';
import { campaignResponse } from './response.js';
import {
  campaignDefaults,
  campaignIdentity,
  campaignShape,
  campaignTable,
  MAX_CAMPAIGN_DEPTH,
} from './schema.js';

export const campaigns: ResourceDescriptor = {
  ...campaignIdentity,
  permission: 'campaigns',
  shape: campaignShape,
  defaults: campaignDefaults,
  response: campaignResponse,
  commands: {
    create: createCampaign,
    update: updateCampaignCommand,
    delete: deleteCampaignCommand,
  },
  list: campaignList,
  retrieve: retrieveFrom(campaignTable, presentCampaign),
  reads: [campaignProgressView],
  text: {
    tag: 'Campaigns',
    component: 'Campaign',
    notes: {
      name: 'At most 200 characters.',
      code: 'At most 30 characters; unique per institution, compared case-insensitively (`SPRING26` and `spring26` are one code: 422 `already_in_use`).',
      parent_id: `The campaign this one sits under, or null for a top-level campaign: a campaign of the institution (422 \`reference_not_found\`, the same for another institution’s), open or closed. The campaign itself or one below it (a cycle) is 422 \`invalid_value\`, as is a tree deeper than ${MAX_CAMPAIGN_DEPTH} levels.`,
      ends_on: 'On or after `starts_on` when both are set (422 `out_of_range`).',
      goal: 'What the campaign means to raise, in the base currency: greater than 0 (a goal of 0 would make no percentage); null for no goal.',
      status:
        'A closed campaign takes no new appeals or coded gift lines (422 `reference_inactive`); the campaigns under it stay as they are.',
    },
    rules: [
      'Campaigns are how a development office codes its giving: each gift line may carry a campaign and an appeal beside its fund (fundraising.md §3). `code` is unique per institution, compared case-insensitively.',
      `Campaigns form a tree through \`parent_id\`: a campaign counts what is coded to it and to every campaign below it. A campaign cannot sit under itself or under one of its own descendants (422 \`invalid_value\` on \`parent_id\`), and the tree has at most ${MAX_CAMPAIGN_DEPTH} levels (a top-level campaign is level 1; a move that would make it deeper is 422 \`invalid_value\`). Moves are serialised per institution, so two moves that would together make a cycle never both succeed.`,
      'A closed campaign may still be a parent: closing a campaign closes none of the campaigns under it. A closed campaign takes no new appeals and no new coded gift lines (422 `reference_inactive`).',
      '`ends_on` must be on or after `starts_on` when both are set (422 `out_of_range` on `ends_on`); either may be null.',
      'A campaign with child campaigns or appeals, or that a gift, pledge or recurring gift is coded to (its own `campaign_id` or a designation’s), cannot be deleted (409 `resource_in_use`, naming what it holds): move, recode or delete them first.',
      '`GET /campaigns/{id}/progress` answers what the campaign and the campaigns below it raised against its goal.',
    ].join('\n\n'),
    conflicts: { delete: ['resource_in_use'] },
    deleteNote:
      'Refused with 409 `resource_in_use` while the campaign has child campaigns or appeals, or while a gift, pledge or recurring gift (or one of their designations) is coded to it.',
    filterNotes: {
      q: 'The name or code contains this text.',
      parent_id: 'The campaigns directly under this campaign (not their descendants).',
    },
    examples: {
      create: {
        name: 'Spring Appeal 2026',
        code: 'SPRING26',
        starts_on: '2026-03-01',
        ends_on: '2026-05-31',
        goal: 250000,
      },
      update: { goal: 300000, status: 'closed' },
    },
  },
};
