import { sql } from 'slonik';
import { enumFilter, idFilter, textSearch, type ListSpec } from '../../pagination/listSpec.js';
import { presentDonor } from './present.js';
import { columns } from './queries.js';
import { donorRoles, donorRow, donorStatuses, type DonorRow } from './schema.js';

export const donorList: ListSpec<DonorRow> = {
  endpoint: '/api/v1/donors',
  from: sql.fragment`donors`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns,
  row: donorRow,
  keyOf: (row) => row.id,
  present: (row) => presentDonor(row),
  filters: {
    q: textSearch([
      sql.fragment`coalesce(first_name, '') || ' ' || coalesce(last_name, '')`,
      sql.fragment`organization_name`,
      sql.fragment`email`,
    ]),
    role: enumFilter(sql.fragment`role`, donorRoles),
    status: enumFilter(sql.fragment`status`, donorStatuses),
    assigned_user_id: idFilter(sql.fragment`assigned_user_id`),
  },
};
