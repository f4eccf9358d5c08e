import { sql } from 'slonik';
import { collectionList } from '../table.js';
import { presentConsent } from './present.js';
import { consentTable } from './schema.js';

/**
 * One donor's consents, newest `captured_at` first (an answer captured earlier may be recorded
 * later), ties newest id first: the handler adds the donor to the endpoint and to the condition.
 */
export const consentList = collectionList({ path: '/donors/:id/consents' }, consentTable, {
  present: presentConsent,
  filters: {},
  sort: { column: sql.fragment`captured_at`, type: 'timestamptz', direction: 'desc' },
});
