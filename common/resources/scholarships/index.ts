import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createScholarship, updateScholarshipCommand } from './commands.js';
import { scholarshipList } from './list.js';
import { presentScholarship } from './present.js';
import { awardedStudentList, fundSummaryList } from './reports.js';
import { awardedStudentResponse, fundSummaryResponse, scholarshipResponse } from './response.js';
import {
  scholarshipDefaults,
  scholarshipIdentity,
  scholarshipShape,
  scholarshipTable,
} from './schema.js';

const reportTag = {
  tag: 'Scholarship reports',
  tagDescription:
    'Awarded students and fund summaries of an award cycle: an award counts once accepted, and stays so when disbursed.',
};

export const scholarships: ResourceDescriptor = {
  ...scholarshipIdentity,
  permission: 'scholarships',
  shape: scholarshipShape,
  defaults: scholarshipDefaults,
  response: scholarshipResponse,
  commands: { create: createScholarship, update: updateScholarshipCommand },
  list: scholarshipList,
  retrieve: retrieveFrom(scholarshipTable, presentScholarship),
  reports: [
    {
      path: '/scholarships/awarded-students',
      list: awardedStudentList,
      item: awardedStudentResponse,
      text: {
        ...reportTag,
        component: 'AwardedStudent',
        summary: 'List awarded students',
        description:
          'One row per award in status `accepted` or `disbursed` in the award cycle, newest award first.',
        filterNotes: {
          award_cycle_id: 'The award cycle reported on.',
          fund_id: 'Awards drawn from this fund.',
          scholarship_id: 'Awards of this scholarship.',
          donor_id:
            'The stewardship report: awards drawn from funds this donor gave gifts to, each award once.',
          q: 'The student’s name or student number contains this text.',
        },
      },
    },
    {
      path: '/scholarships/fund-summaries',
      list: fundSummaryList,
      item: fundSummaryResponse,
      text: {
        ...reportTag,
        component: 'FundSummary',
        summary: 'List fund summaries',
        description:
          'One row per fund with accepted or disbursed awards in the award cycle, newest fund first. A fund’s row is exactly the sum of its rows in awarded-students.',
        filterNotes: { award_cycle_id: 'The award cycle summarised.' },
      },
    },
  ],
  text: {
    tag: 'Scholarships',
    component: 'Scholarship',
    notes: {
      fund_id: 'An active fund of the institution: the scholarship’s awards draw from it.',
      status: 'A retired scholarship takes no new awards.',
    },
    rules: [
      '`fund_id` must name an active fund of the institution (422 `reference_not_found` / `reference_inactive`).',
      'Moving a scholarship to another fund moves what its live awards commit: 422 `insufficient_fund_balance` on `fund_id` when the new fund’s `award_limit` cannot take it.',
    ].join('\n\n'),
    filterNotes: { q: 'The name contains this text.' },
    examples: {
      create: {
        name: 'Lovelace Prize in Mathematics',
        fund_id: 1,
        description: 'For a second-year student with the best results in analysis.',
      },
      update: { description: 'For a second-year student with the best results in algebra.' },
    },
  },
};
