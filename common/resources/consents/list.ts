import { collectionList } from '../table.js';
import { presentConsent } from './present.js';
import { consentTable } from './schema.js';

/** One donor's consents: the handler adds the donor to the endpoint and to the condition. */
export const consentList = collectionList({ path: '/donors/:id/consents' }, consentTable, {
  present: presentConsent,
  filters: {},
});
