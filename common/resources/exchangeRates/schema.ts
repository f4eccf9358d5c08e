import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { calendarDate, currencyCode, rate, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Table } from '../table.js';

export const exchangeRateIdentity: ResourceIdentity = {
  name: 'exchange_rates',
  object: 'exchange_rate',
  label: 'exchange rate',
  path: '/exchange-rates',
};

export const exchangeRateShape: Shape = {
  currency: { schema: currencyCode, required: true },
  rate: { schema: rate, required: true },
  effective_on: { schema: calendarDate, required: true },
  source: { schema: text(100), nullable: true },
};

export const exchangeRateDefaults = { source: null } as const;

const exchangeRateRow = z.object({
  id: z.number(),
  currency: z.string(),
  /** numeric(18,6) as exact text from the database; a number in a dry-run preview. */
  rate: z.union([z.string(), z.number()]),
  effective_on: z.string(),
  source: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ExchangeRateRow = z.infer<typeof exchangeRateRow>;
export type ExchangeRateFields = Omit<ExchangeRateRow, 'id' | 'created_at' | 'updated_at'>;

export const exchangeRateTable: Table<ExchangeRateRow, ExchangeRateFields> = {
  name: 'exchange_rates',
  row: exchangeRateRow,
  readAs: { effective_on: sql.fragment`effective_on::text` },
  writeAs: {
    // The number's shortest decimal form, which the field allows at most 6 places: stored exactly.
    rate: (value) => sql.fragment`${String(value)}::numeric`,
    effective_on: (date) => sql.fragment`${date}::date`,
  },
};
