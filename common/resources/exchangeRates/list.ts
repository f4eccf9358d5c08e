import { sql } from 'slonik';
import { errors } from '../../errors.js';
import type { FilterSpec } from '../../pagination/listSpec.js';
import { currencyCode } from '../../validation/fields.js';
import { collectionList } from '../table.js';
import { presentExchangeRate } from './present.js';
import { exchangeRateIdentity, exchangeRateTable } from './schema.js';

/** `currency`: a code the field would accept; the unique (institution, currency, day) index serves it. */
const currencyFilter: FilterSpec = {
  description: { kind: 'pattern', pattern: '^[A-Z]{3}$', example: 'EUR' },
  parse(param, raw) {
    if (!currencyCode.safeParse(raw).success)
      throw errors.invalidParameter(
        param,
        `${param} must be an ISO 4217 currency code such as EUR.`,
      );
    return raw;
  },
  condition: (value) => sql.fragment`currency = ${value}`,
};

export const exchangeRateList = collectionList(exchangeRateIdentity, exchangeRateTable, {
  present: presentExchangeRate,
  filters: { currency: currencyFilter },
});
