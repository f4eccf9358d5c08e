import { sql } from 'slonik';
import { enumFilter, textSearch, type ListSpec } from '../../pagination/listSpec.js';
import { presentUser } from './present.js';
import { columns } from './queries.js';
import { userRoles, userRow, userStatuses, type UserRow } from './schema.js';

export const userList: ListSpec<UserRow> = {
  endpoint: '/api/v1/users',
  from: sql.fragment`users`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns,
  row: userRow,
  keyOf: (row) => row.id,
  present: presentUser,
  filters: {
    q: textSearch([sql.fragment`first_name || ' ' || last_name`, sql.fragment`email`]),
    role: enumFilter(sql.fragment`role`, userRoles),
    status: enumFilter(sql.fragment`status`, userStatuses),
  },
};
