import { sql } from 'slonik';
import { z } from 'zod';
import type { CommandContext } from '../commands/command.js';
import type { RecordCheck } from '../commands/resourceCommands.js';
import { apportion, baseCents, centsToNumber, toCents } from '../money.js';
import { findExchangeRate } from './exchangeRates/queries.js';

/**
 * The institution's base currency as committed, not as the API key's cached institution says
 * (a PATCH /institution may have changed it since the write was queued), read FOR KEY SHARE as
 * the foreign keys of every insert hold the row. A change of currency holds it FOR UPDATE, so a
 * write reading it here either commits first, and is seen by that change's check of the money
 * records, or waits and then reads the row as the change left it: never a gift in a currency
 * that was the base when it was queued and is not when it commits.
 */
export async function baseCurrency(
  ctx: Pick<CommandContext, 'db' | 'dryRun' | 'institution'>,
): Promise<string> {
  const lock = ctx.dryRun ? sql.fragment`` : sql.fragment`FOR KEY SHARE`;
  return ctx.db.oneFirst(sql.type(z.object({ currency: z.string() }))`
    SELECT currency FROM institutions WHERE id = ${ctx.institution.id} ${lock}`);
}

/** The record's date the rate is taken on: a gift's, a pledge's, a recurring gift's first. */
export type RateDate = 'gift_date' | 'pledge_date' | 'start_on';

interface Converted {
  currency: string;
  exchange_rate: string | number | null;
}

/**
 * fundraising.md §2, on a create or an update of a gift, pledge or recurring gift: a new record
 * that sends no currency takes `defaultCurrency` (a payment's pledge's) or the base currency, and its `exchange_rate` is set in
 * `check.record`: 1 in the base currency (where sending one is `not_allowed`); else the one
 * sent, else the rate it already has (same currency and date), else the latest rate in effect on
 * its date (none: `exchange_rate_missing` on `currency`). Answers the base currency.
 */
export async function judgeConversion(
  ctx: CommandContext,
  check: RecordCheck<Converted & Partial<Record<RateDate, string>>>,
  dateField: RateDate,
  defaultCurrency: string | null = null,
): Promise<string> {
  const { record, validation, existing, valid } = check;
  const base = await baseCurrency(ctx);
  const sent = (name: string) => validation.sent.has(name);
  if (!existing && !sent('currency')) record.currency = defaultCurrency ?? base;
  if (!valid('currency')) return base;
  if (record.currency === base) {
    if (sent('exchange_rate'))
      validation.errors.push({
        param: 'exchange_rate',
        code: 'not_allowed',
        message: `is not sent for the base currency, ${base}: its rate is always 1`,
      });
    record.exchange_rate = 1;
    return base;
  }
  if (sent('exchange_rate')) return base;
  // Same currency and date: the rate it has stays (and a record made before currencies and not
  // yet converted stays so until it is sent a rate or its currency or date changes).
  const unchanged =
    existing !== null &&
    existing.currency === record.currency &&
    existing[dateField] === record[dateField];
  if (unchanged) return base;
  if (!valid(dateField)) return base;
  const date = record[dateField] as string;
  const rate = await findExchangeRate(ctx.db, ctx.institution.id, record.currency as string, date);
  if (rate === null)
    validation.errors.push({
      param: 'currency',
      code: 'exchange_rate_missing',
      message: `has no exchange rate in effect on ${date} (the ${dateField}): add one with POST /api/v1/exchange-rates, or send exchange_rate`,
    });
  else record.exchange_rate = rate;
  return base;
}

/** An amount in the base currency at a rate, as the JSON number a row stores. */
export const baseAmountOf = (amount: string | number, rate: string | number): number =>
  centsToNumber(baseCents(toCents(amount), rate));

/**
 * The base amounts of the parts of a whole (a gift's designations), in proportion to their
 * amounts, summing exactly to the whole's base amount (the remainder on the last part).
 */
export const apportionBase = (
  parts: readonly { amount: string | number }[],
  baseAmount: string | number,
): number[] =>
  apportion(
    parts.map((part) => toCents(part.amount)),
    toCents(baseAmount),
  ).map(centsToNumber);

/**
 * The base amount of money given back of something worth `amount` (`baseAmount` in the base
 * currency) of which `refunded` (`baseRefunded`) was given back before: the rest of the base
 * amount when this gives back the rest, else `back` at the rate, never more than is left. So
 * that the refunds of a whole sum exactly to its base amount once it is all given back.
 */
export function baseGivenBack(
  whole: { amount: bigint; refunded: bigint; baseAmount: bigint; baseRefunded: bigint },
  back: bigint,
  rate: string | number,
): bigint {
  const baseLeft = whole.baseAmount - whole.baseRefunded;
  if (whole.refunded + back >= whole.amount) return baseLeft;
  const atRate = baseCents(back, rate);
  return atRate < baseLeft ? atRate : baseLeft;
}
