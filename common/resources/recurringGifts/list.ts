import { sql } from 'slonik';
import { errors } from '../../errors.js';
import { enumFilter, idFilter } from '../../pagination/listSpec.js';
import { collectionList } from '../table.js';
import { presentRecurringGift } from './present.js';
import {
  lapsedCondition,
  recurringGiftIdentity,
  recurringGiftStatuses,
  recurringGiftTable,
} from './schema.js';

const booleans = ['true', 'false'] as const;

export const recurringGiftList = collectionList(recurringGiftIdentity, recurringGiftTable, {
  present: presentRecurringGift,
  filters: {
    donor_id: idFilter(sql.fragment`donor_id`),
    status: enumFilter(sql.fragment`status`, recurringGiftStatuses),
    lapsed: {
      description: { kind: 'enum', values: booleans },
      parse(param, raw) {
        if (!(booleans as readonly string[]).includes(raw))
          throw errors.invalidParameter(param, `${param} must be true or false.`);
        return raw;
      },
      // Judged on today's date at each request, so a cursor pins the answer asked, not a set of rows.
      condition: (value) => lapsedCondition(value === 'true'),
    },
  },
});
