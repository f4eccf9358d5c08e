import { sql } from 'slonik';
import { enumFilter, idFilter, textSearch } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentAppeal } from './present.js';
import { appealChannels, appealIdentity, appealStatuses, appealTable } from './schema.js';

export const appealList = collectionList(appealIdentity, appealTable, {
  present: presentAppeal,
  filters: {
    q: textSearch([sql.fragment`name`, sql.fragment`code`]),
    campaign_id: idFilter(sql.fragment`campaign_id`),
    status: enumFilter(sql.fragment`status`, appealStatuses),
    channel: enumFilter(sql.fragment`channel`, appealChannels),
  },
});
