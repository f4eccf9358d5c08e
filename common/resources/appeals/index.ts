import { appealResultsView } from '../campaigns/progress.js';
import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createAppeal, deleteAppealCommand, updateAppealCommand } from './commands.js';
import { appealList } from './list.js';
import { presentAppeal } from './present.js';
import { appealResponse } from './response.js';
import { appealDefaults, appealIdentity, appealShape, appealTable } from './schema.js';

export const appeals: ResourceDescriptor = {
  ...appealIdentity,
  permission: 'campaigns',
  shape: appealShape,
  defaults: appealDefaults,
  response: appealResponse,
  commands: { create: createAppeal, update: updateAppealCommand, delete: deleteAppealCommand },
  list: appealList,
  retrieve: retrieveFrom(appealTable, presentAppeal),
  reads: [appealResultsView],
  text: {
    tag: 'Appeals',
    component: 'Appeal',
    notes: {
      name: 'At most 200 characters.',
      code: 'At most 30 characters; unique per institution among appeals, compared case-insensitively (422 `already_in_use`).',
      campaign_id:
        'The campaign the appeal belongs to, or null: a campaign of the institution (422 `reference_not_found`, the same for another institution’s) that is active when it is set (a closed one: 422 `reference_inactive`). An appeal keeps its campaign when that campaign closes. It cannot change while a gift, pledge or recurring gift is coded to the appeal (422 `not_allowed`).',
      channel: 'How the appeal reaches donors.',
      ends_on: 'On or after `starts_on` when both are set (422 `out_of_range`).',
      cost: 'What the appeal cost to run, in the base currency: 0 or more; null when not recorded.',
      status: 'A closed appeal takes no new coded gift lines (422 `reference_inactive`).',
    },
    rules: [
      'An appeal is one solicitation (a mailing, an email, a phonathon, an event) that gift lines are coded to beside their fund and campaign (fundraising.md §3). `code` is unique per institution among appeals, compared case-insensitively.',
      'An appeal may belong to a campaign (`campaign_id`). A gift line coded to an appeal of a campaign counts toward that campaign, and a line that names both must name the appeal’s own campaign (422 `invalid_value` on the appeal). A line coded to an appeal without a campaign counts toward the line’s campaign, if any.',
      'A closed appeal takes no new coded gift lines (422 `reference_inactive`). Setting `campaign_id` to a closed campaign is 422 `reference_inactive`; an appeal whose campaign closes keeps it.',
      '`ends_on` must be on or after `starts_on` when both are set (422 `out_of_range` on `ends_on`); either may be null.',
      'While a gift, pledge or recurring gift is coded to the appeal (its own `appeal_id` or a designation’s), the appeal keeps its campaign (a PATCH of `campaign_id` is 422 `not_allowed`: a line coded only to the appeal counts toward that campaign) and cannot be deleted (409 `resource_in_use`).',
      '`GET /appeals/{id}/results` answers what the appeal raised and what it cost per unit raised.',
    ].join('\n\n'),
    conflicts: { delete: ['resource_in_use'] },
    deleteNote:
      'Deletes the appeal; its campaign stays. Refused with 409 `resource_in_use` while a gift, pledge or recurring gift (or one of their designations) is coded to it.',
    filterNotes: {
      q: 'The name or code contains this text.',
      campaign_id: 'The appeals of this campaign.',
    },
    examples: {
      create: {
        name: 'Spring letter 2026',
        code: 'SPRING26-MAIL',
        campaign_id: 1,
        channel: 'mail',
        starts_on: '2026-03-01',
        cost: 1250.5,
      },
      update: { cost: 1400, status: 'closed' },
    },
  },
};
