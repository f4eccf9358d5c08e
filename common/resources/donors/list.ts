import { sql } from 'slonik';
import { enumFilter, idFilter, parseIdParameter, textSearch } from '../../pagination/listSpec.js';
import { errors } from '../../errors.js';
import { collectionList } from '../table.js';
import { presentDonor } from './present.js';
import { donorIdentity, donorRoles, donorStatuses, donorTable } from './schema.js';

export const donorList = collectionList(donorIdentity, donorTable, {
  present: (row) => presentDonor(row),
  byDefault: { unless: 'status', condition: sql.fragment`status NOT IN ('merged', 'erased')` },
  filters: {
    q: textSearch([
      sql.fragment`coalesce(first_name, '') || ' ' || coalesce(last_name, '')`,
      sql.fragment`organization_name`,
      sql.fragment`email`,
    ]),
    external_id: {
      description: { kind: 'text', maxLength: 100 },
      parse(param, raw) {
        if (raw === '' || raw.length > 100 || raw.includes('\u0000'))
          throw errors.invalidParameter(param, `${param} must be 1 to 100 characters.`);
        return raw;
      },
      // A merged donor's external_id finds its survivor (constituents.md §5).
      condition: (value) => sql.fragment`(external_id = ${value} OR id IN (
        SELECT m.merged_into_id FROM donors m
        WHERE m.institution_id = donors.institution_id AND m.merged_external_id = ${value}))`,
    },
    role: enumFilter(sql.fragment`role`, donorRoles),
    status: enumFilter(sql.fragment`status`, donorStatuses),
    assigned_user_id: idFilter(sql.fragment`assigned_user_id`),
    household_id: idFilter(sql.fragment`household_id`),
    // Served by the GIN index on tag_ids.
    tag_id: {
      description: { kind: 'id' },
      parse: parseIdParameter,
      condition: (value) => sql.fragment`tag_ids @> ARRAY[${Number(value)}::bigint]`,
    },
  },
});
