import { z } from 'zod';

/**
 * Value schemas for request fields. Each validates a present, non-null value; absence, null and
 * requiredness are decided by validateBody and the resource's rules.
 */
/** Postgres text cannot hold U+0000, so a string carrying it is refused as a field error. */
const withoutNul = (value: string) => !value.includes('\u0000');
const nulProblem = {
  message: 'must not contain the NUL character (\\u0000)',
  params: { code: 'invalid_format' },
};
/**
 * A lone UTF-16 surrogate (`"\ud800"` in JSON) has no UTF-8 form: Postgres would store U+FFFD
 * instead, and what a create answered would not be what is stored. Such text is refused.
 */
const surrogateProblem = {
  message: 'must be valid Unicode text (it holds a lone UTF-16 surrogate)',
  params: { code: 'invalid_value' },
};
const wellFormed = (value: string) => value.isWellFormed();

export const text = (max: number) =>
  z
    .string({ message: 'must be a string' })
    .trim()
    .max(max, { message: `must be at most ${max} characters` })
    .refine(withoutNul, nulProblem)
    .refine(wellFormed, surrogateProblem);

export const MAX_AMOUNT = 999_999_999_999.99;

/** Money arrives as a JSON number and is kept exact: its shortest decimal form has at most 2 places. */
export const money = z
  .number({ message: 'must be a number' })
  .gt(0, { message: 'must be greater than 0', abort: true })
  .max(MAX_AMOUNT, { message: `must be at most ${MAX_AMOUNT}`, abort: true })
  .refine((value) => /^\d+(\.\d{1,2})?$/.test(String(value)), {
    message: 'must have at most 2 decimal places',
    params: { code: 'invalid_format' },
  });

/** numeric(18,6) holds 12 digits before the point: a rate must stay below 10^12. */
export const RATE_CEILING = 1_000_000_000_000;

/**
 * An exchange rate (base units for one unit of another currency) arrives as a JSON number and
 * is kept exact, as money is: its shortest decimal form has at most 6 places. A value out of
 * range is only `out_of_range`: `abort` stops the decimal-places check, which "1e+21" would fail.
 */
export const rate = z
  .number({ message: 'must be a number' })
  .gt(0, { message: 'must be greater than 0', abort: true })
  .lt(RATE_CEILING, { message: `must be less than ${RATE_CEILING}`, abort: true })
  .refine((value) => /^\d+(\.\d{1,6})?$/.test(String(value)), {
    message: 'must have at most 6 decimal places',
    params: { code: 'invalid_format' },
  });

/** Money that may be 0 (a gift's benefit_amount). */
export const moneyOrZero = z
  .number({ message: 'must be a number' })
  .min(0, { message: 'must be 0 or more', abort: true })
  .max(MAX_AMOUNT, { message: `must be at most ${MAX_AMOUNT}`, abort: true })
  .refine((value) => /^\d+(\.\d{1,2})?$/.test(String(value)), {
    message: 'must have at most 2 decimal places',
    params: { code: 'invalid_format' },
  });

/** A real calendar date written YYYY-MM-DD; it is stored and returned exactly as sent. */
export const calendarDate = z.string({ message: 'must be a string' }).refine(
  (value) => {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
    if (!match) return false;
    const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
    // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
    const date = new Date(0);
    date.setUTCFullYear(year, month - 1, day);
    return (
      year >= 1 &&
      date.getUTCFullYear() === year &&
      date.getUTCMonth() === month - 1 &&
      date.getUTCDate() === day
    );
  },
  { message: 'must be a real date written YYYY-MM-DD', params: { code: 'invalid_format' } },
);

export const email = z
  .string({ message: 'must be a string' })
  .trim()
  .max(254, { message: 'must be at most 254 characters' })
  .refine(withoutNul, nulProblem)
  .refine(wellFormed, surrogateProblem)
  .pipe(z.email({ message: 'must be a valid email address' }));

export const recordId = z
  .number({ message: 'must be an integer id' })
  .int({ message: 'must be an integer id' })
  .positive({ message: 'must be a positive integer id' })
  .max(Number.MAX_SAFE_INTEGER, { message: 'is out of range' });

export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { message: `must be one of: ${values.join(', ')}` });

export const flag = z.boolean({ message: 'must be true or false' });

const currencies = new Set(Intl.supportedValuesOf('currency'));
export const currencyCode = z
  .string({ message: 'must be a string' })
  .refine((value) => /^[A-Z]{3}$/.test(value) && currencies.has(value), {
    message: 'must be an ISO 4217 currency code such as USD',
    params: { code: 'invalid_value' },
  });
