import { sql } from 'slonik';
import { deleted, type Command, type CommandContext } from '../../commands/command.js';
import {
  createCommand,
  findTarget,
  type RecordCheck,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { alreadyInUse } from '../checks.js';
import { baseCurrency } from '../currency.js';
import { readOnlyOf } from '../responseFields.js';
import { presentExchangeRate } from './present.js';
import { deleteExchangeRate } from './queries.js';
import { exchangeRateResponse } from './response.js';
import {
  exchangeRateDefaults,
  exchangeRateIdentity,
  exchangeRateShape,
  exchangeRateTable,
  type ExchangeRateFields,
  type ExchangeRateRow,
} from './schema.js';

const taken = alreadyInUse('effective_on', 'exchange rate of this currency');

/** Not the base currency; one rate per currency and day. */
async function exchangeRateRules(
  ctx: CommandContext,
  check: RecordCheck<ExchangeRateRow>,
): Promise<void> {
  const { record, validation } = check;
  const currencyUsable = check.valid('currency');
  if (currencyUsable) {
    const base = await baseCurrency(ctx);
    if (record.currency === base) {
      validation.errors.push({
        param: 'currency',
        code: 'invalid_value',
        message: `is the institution’s base currency (${base}), whose rate is always 1`,
      });
      return;
    }
  }
  // The unique constraint is the backstop for two creates racing past this read.
  if (
    currencyUsable &&
    check.valid('effective_on') &&
    (await ctx.db.exists(sql.unsafe`
      SELECT 1 FROM exchange_rates
      WHERE institution_id = ${ctx.institution.id} AND currency = ${String(record.currency)}
        AND effective_on = ${String(record.effective_on)}::date`))
  )
    validation.errors.push(taken);
}

const exchangeRatesResource: WritableResource<ExchangeRateRow, ExchangeRateFields> = {
  identity: exchangeRateIdentity,
  table: exchangeRateTable,
  shape: exchangeRateShape,
  defaults: exchangeRateDefaults,
  readOnly: readOnlyOf(exchangeRateResponse, exchangeRateShape),
  constraints: { exchange_rates_currency_effective_on_key: taken },
  rules: exchangeRateRules,
  present: presentExchangeRate,
};

export const createExchangeRate = createCommand(exchangeRatesResource);

/** A posted gift keeps the rate it took, so nothing else changes with the rate's delete. */
export const deleteExchangeRateCommand: Command = {
  name: `${exchangeRateIdentity.name}.delete`,
  async execute(ctx, request) {
    const existing = await findTarget(ctx, request, exchangeRatesResource);
    if (!ctx.dryRun) await deleteExchangeRate(ctx.db, ctx.institution.id, existing.id);
    return deleted(exchangeRateIdentity.object, existing.id);
  },
};
