import { sql } from 'slonik';
import { enumFilter, idFilter, textSearch } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentCampaign } from './present.js';
import { campaignIdentity, campaignStatuses, campaignTable } from './schema.js';

export const campaignList = collectionList(campaignIdentity, campaignTable, {
  present: presentCampaign,
  filters: {
    q: textSearch([sql.fragment`name`, sql.fragment`code`]),
    status: enumFilter(sql.fragment`status`, campaignStatuses),
    parent_id: idFilter(sql.fragment`parent_id`),
  },
});
