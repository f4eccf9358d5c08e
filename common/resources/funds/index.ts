import type { ResourceDescriptor, Retrieval } from '../descriptor.js';
import { findRow } from '../table.js';
import { createFund, updateFundCommand } from './commands.js';
import { fundList } from './list.js';
import { presentFund } from './present.js';
import { findFundTotals } from './queries.js';
import { fundDetailResponse, fundResponse } from './response.js';
import { fundDefaults, fundIdentity, fundShape, fundTable } from './schema.js';

/** A fund with its read-only totals. */
const retrieveFund: Retrieval = async (db, institutionId, id) => {
  const row = await findRow(db, fundTable, institutionId, id);
  return row && presentFund(row, await findFundTotals(db, institutionId, id));
};

export const funds: ResourceDescriptor = {
  ...fundIdentity,
  permission: 'funds',
  shape: fundShape,
  defaults: fundDefaults,
  response: fundResponse,
  detail: fundDetailResponse,
  commands: { create: createFund, update: updateFundCommand },
  list: fundList,
  retrieve: retrieveFund,
  text: {
    tag: 'Funds',
    component: 'Fund',
    notes: {
      code: 'Unique per institution (422 `already_in_use`).',
      award_limit:
        'The most that live awards may draw from the fund, at most 2 decimal places; null for no limit. Lowering it below what live awards commit: 422 `insufficient_fund_balance`.',
      status: 'A closed fund takes no new gifts or scholarships.',
    },
    rules: [
      '`code` is unique per institution.',
      '`award_limit` caps what live awards (offered, accepted, disbursed) may draw from the fund; an update that lowers it below what they already commit is 422 `insufficient_fund_balance` on `award_limit`.',
      'A `closed` fund takes no new gifts or scholarships.',
    ].join('\n\n'),
    filterNotes: { q: 'The name or code contains this text.' },
    examples: {
      create: {
        name: 'Engineering Scholarships',
        code: 'ENG-SCH',
        description: 'Need-based scholarships for engineering students.',
        restriction: 'temporarily_restricted',
        award_limit: 50000,
      },
      update: { description: 'Need-based scholarships for engineering and computing students.' },
    },
  },
};
