import { sql } from 'slonik';
import { z } from 'zod';
import type { CommandContext } from '../../commands/command.js';
import type { FieldError } from '../../errors.js';
import { centsToNumber, toCents } from '../../money.js';
import { committedAwards } from './queries.js';

const insufficientFundBalance = (param: string, limit: bigint, committed: bigint): FieldError => ({
  param,
  code: 'insufficient_fund_balance',
  message:
    `would take the fund's live awards over its award limit of ${centsToNumber(limit)} ` +
    `(${centsToNumber(committed)} is committed, ${centsToNumber(limit - committed)} remains)`,
});

const limitRow = z.object({ award_limit: z.string().nullable() });

/**
 * Whether the fund can take `draw` more in live awards on top of what its live awards commit
 * now (leaving out `exceptAwardId`, the award being changed, whose new amount is in `draw`).
 *
 * A real write first locks the fund row FOR UPDATE, so every write that raises what a fund
 * commits (award create, amount increase, a move to a scholarship on another fund, a
 * scholarship moving to another fund) and every change of the fund's limit runs one at a time
 * per fund, and the sum that follows (a new statement, so a new READ COMMITTED snapshot) sees
 * every award committed before the lock was granted. A dry run runs READ ONLY and cannot lock:
 * it computes the same answer from what is committed now.
 */
export async function checkFundCapacity(
  ctx: CommandContext,
  fundId: number,
  draw: string | number,
  exceptAwardId: number | null,
  param: string,
): Promise<FieldError | null> {
  const lock = ctx.dryRun ? sql.fragment`` : sql.fragment`FOR UPDATE`;
  const fund = await ctx.db.maybeOne(sql.type(limitRow)`
    SELECT award_limit FROM funds
    WHERE institution_id = ${ctx.institution.id} AND id = ${fundId} ${lock}`);
  if (!fund || fund.award_limit === null) return null;
  const limit = toCents(fund.award_limit);
  const committed = toCents(
    await committedAwards(ctx.db, ctx.institution.id, fundId, exceptAwardId),
  );
  return committed + toCents(draw) > limit
    ? insufficientFundBalance(param, limit, committed)
    : null;
}
