import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import { createExchangeRate, deleteExchangeRateCommand } from './commands.js';
import { exchangeRateList } from './list.js';
import { presentExchangeRate } from './present.js';
import { exchangeRateResponse } from './response.js';
import {
  exchangeRateDefaults,
  exchangeRateIdentity,
  exchangeRateShape,
  exchangeRateTable,
} from './schema.js';

/** fundraising.md §2: the rates a record in another currency than the base takes. */
export const exchangeRates: ResourceDescriptor = {
  ...exchangeRateIdentity,
  permission: 'campaigns',
  shape: exchangeRateShape,
  defaults: exchangeRateDefaults,
  response: exchangeRateResponse,
  // No update: a rate is corrected by deleting it and posting another (PATCH is 405).
  commands: { create: createExchangeRate, delete: deleteExchangeRateCommand },
  list: exchangeRateList,
  retrieve: retrieveFrom(exchangeRateTable, presentExchangeRate),
  text: {
    tag: 'Exchange rates',
    component: 'ExchangeRate',
    notes: {
      currency:
        'The other currency. Not the institution’s base currency (422 `invalid_value`), whose rate is always 1.',
      rate: 'Units of the base currency for one unit of `currency`, greater than 0 (else `out_of_range`; more than 6 decimal places is `invalid_format`). With base USD, `{"currency": "EUR", "rate": 1.08}` says one euro is worth 1.08 dollars.',
      effective_on:
        'The first day the rate is in effect. One rate per currency and day (422 `already_in_use`).',
      source: 'Where the rate came from (a bank, a feed); at most 100 characters; optional.',
    },
    rules: [
      'A rate says how many units of the institution’s base currency one unit of `currency` is worth from `effective_on` on. A gift, pledge or recurring gift in another currency than the base takes the latest rate of its currency with `effective_on` on or before its own date (`gift_date`, `pledge_date`, `start_on`), unless its body sends `exchange_rate`.',
      'A record keeps the rate it took when it was posted, with its base amount: changing or deleting a rate never changes a posted gift, pledge or recurring gift.',
      'There is one rate per currency and `effective_on` (422 `already_in_use` on `effective_on`). A rate is never edited (PATCH is 405): to correct one, delete it and post another.',
      'The list is newest first (the order the rates were recorded); `currency` narrows it to one currency. A rate of another institution is as absent as a missing one (404).',
    ].join('\n\n'),
    deleteNote:
      'Removes the rate for records posted from now on; a gift, pledge or recurring gift that took it keeps it.',
    filterNotes: { currency: 'Only the rates of this ISO 4217 currency.' },
    examples: {
      create: {
        currency: 'EUR',
        rate: 1.08,
        effective_on: '2026-01-01',
        source: 'ECB reference rate',
      },
    },
  },
};
