import { z } from 'zod';
import { calendarDay, recordIdOf, timestamps } from '../responseFields.js';

export const exchangeRateResponse = z.object({
  id: recordIdOf('exchange rate'),
  object: z.literal('exchange_rate'),
  currency: z.string().describe('ISO 4217 code; never the institution’s base currency.'),
  rate: z
    .number()
    .positive()
    .describe(
      'Units of the base currency for one unit of `currency`: a JSON number with at most 6 decimal places, exactly as sent.',
    )
    .meta({ examples: [1.08] }),
  effective_on: calendarDay.describe('The first day the rate is in effect.'),
  source: z.string().nullable().describe('Where the rate came from; null for none.'),
  ...timestamps,
});
export type ExchangeRateResponse = z.infer<typeof exchangeRateResponse>;
