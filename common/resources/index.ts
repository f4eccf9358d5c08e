import { appeals } from './appeals/index.js';
import { awardCycles } from './awardCycles/index.js';
import { awards } from './awards/index.js';
import { campaigns } from './campaigns/index.js';
import type { ResourceDescriptor } from './descriptor.js';
import { donors } from './donors/index.js';
import { duplicates } from './duplicates/index.js';
import { exchangeRates } from './exchangeRates/index.js';
import { funds } from './funds/index.js';
import { gifts } from './gifts/index.js';
import { givingStatementRuns } from './givingStatementRuns/index.js';
import { givingStatements } from './givingStatements/index.js';
import { pledges } from './pledges/index.js';
import { receipts } from './receipts/index.js';
import { relationships } from './relationships/index.js';
import { recurringGifts } from './recurringGifts/index.js';
import { scholarships } from './scholarships/index.js';
import { students } from './students/index.js';
import { tags } from './tags/index.js';
import { users } from './users/index.js';
import { webhookEndpoints } from './webhookEndpoints/index.js';

/**
 * Every resource of the API, in the order the route table and the document list them. The
 * routes, the command registry, retrieval and the OpenAPI document are derived from this list.
 */
export const resources: readonly ResourceDescriptor[] = [
  donors,
  relationships,
  duplicates,
  gifts,
  pledges,
  receipts,
  givingStatements,
  givingStatementRuns,
  recurringGifts,
  funds,
  exchangeRates,
  campaigns,
  appeals,
  users,
  awardCycles,
  students,
  scholarships,
  awards,
  tags,
  webhookEndpoints,
];
