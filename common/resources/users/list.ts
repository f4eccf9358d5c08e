import { sql } from 'slonik';
import { enumFilter, textSearch } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentUser } from './present.js';
import { userIdentity, userRoles, userStatuses, userTable } from './schema.js';

export const userList = collectionList(userIdentity, userTable, {
  present: presentUser,
  filters: {
    q: textSearch([sql.fragment`first_name || ' ' || last_name`, sql.fragment`email`]),
    role: enumFilter(sql.fragment`role`, userRoles),
    status: enumFilter(sql.fragment`status`, userStatuses),
  },
});
