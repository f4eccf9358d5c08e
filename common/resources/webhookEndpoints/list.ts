import { enumFilter } from '../../pagination/listSpec.js';
import { sql } from 'slonik';
import { collectionList } from '../table.js';
import { presentWebhookEndpoint } from './present.js';
import { webhookEndpointIdentity, webhookEndpointTable } from './schema.js';

export const webhookEndpointList = collectionList(webhookEndpointIdentity, webhookEndpointTable, {
  present: presentWebhookEndpoint,
  filters: { status: enumFilter(sql.fragment`status`, ['enabled', 'disabled']) },
});
