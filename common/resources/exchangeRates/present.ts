import type { ExchangeRateResponse } from './response.js';
import type { ExchangeRateRow } from './schema.js';

export const presentExchangeRate = (row: ExchangeRateRow): ExchangeRateResponse => ({
  id: row.id,
  object: 'exchange_rate',
  currency: row.currency,
  // "0.006700" from the database is the number 0.0067: the value sent, without the padding.
  rate: Number(row.rate),
  effective_on: row.effective_on,
  source: row.source,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
