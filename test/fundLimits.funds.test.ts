// A fund's award limit against changes to the limit and scholarships moving between funds.
import {
  createAward,
  expectRefusedThreeWays,
  fieldErrors,
  fundWithScholarship,
  insufficient,
  patch,
  service,
  setUpFundLimitTests,
  totals,
  type Fund,
} from './helpers/fundLimits.js';

setUpFundLimitTests();

describe('fund award_limit changes', () => {
  test('lowering the limit below what live awards commit is refused three ways; down to it is accepted', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    await createAward(scholarship, 350);
    await createAward(scholarship, 250.5);
    await expectRefusedThreeWays(
      'PATCH',
      `/api/v1/funds/${fund}`,
      { award_limit: 600.49 },
      insufficient('award_limit'),
    );
    const lowered = await patch<Fund>(`/api/v1/funds/${fund}`, { award_limit: 600.5 });
    expect(lowered.award_limit).toBe(600.5);
    expect((await totals(fund)).award_capacity_remaining).toBe(0);
    await patch(`/api/v1/funds/${fund}`, { award_limit: null });
    expect((await totals(fund)).award_capacity_remaining).toBeNull();
  });

  test('setting a limit on an unlimited fund is checked the same way', async () => {
    const { fund, scholarship } = await fundWithScholarship(null);
    await createAward(scholarship, 800);
    await expectRefusedThreeWays(
      'PATCH',
      `/api/v1/funds/${fund}`,
      { award_limit: 0 },
      insufficient('award_limit'),
    );
    await patch(`/api/v1/funds/${fund}`, { award_limit: 800 });
  });

  test('cancelled awards do not hold the limit up', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    const award = await createAward(scholarship, 900);
    await patch(`/api/v1/awards/${award.id}`, { status: 'cancelled' });
    await patch(`/api/v1/funds/${fund}`, { award_limit: 0 });
  });

  test('a limit refusal is reported with the fund’s other problems', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    await createAward(scholarship, 10);
    const response = await service.call('PATCH', `/api/v1/funds/${fund}`, {
      body: { award_limit: 5, name: '' },
    });
    expect(fieldErrors(response)).toEqual([
      { param: 'name', code: 'required' },
      { param: 'award_limit', code: 'insufficient_fund_balance' },
    ]);
  });
});

describe('moving a scholarship to another fund moves what its live awards commit', () => {
  test('refused three ways when the new fund lacks room; accepted when it has it, and totals move', async () => {
    const from = await fundWithScholarship(null);
    const award = await createAward(from.scholarship, 700);
    const cancelled = await createAward(from.scholarship, 5000);
    await patch(`/api/v1/awards/${cancelled.id}`, { status: 'cancelled' });

    const tight = await fundWithScholarship(1000);
    await createAward(tight.scholarship, 400);
    await expectRefusedThreeWays(
      'PATCH',
      `/api/v1/scholarships/${from.scholarship}`,
      { fund_id: tight.fund },
      insufficient('fund_id'),
    );

    const roomy = await fundWithScholarship(1000);
    await createAward(roomy.scholarship, 300);
    await patch(`/api/v1/scholarships/${from.scholarship}`, { fund_id: roomy.fund });
    expect((await totals(from.fund)).awards_committed).toBe(0);
    expect(await totals(roomy.fund)).toEqual({
      gifts_received: 0,
      awards_committed: 1000,
      award_capacity_remaining: 0,
      pledged_outstanding: 0,
    });
    expect(award.amount).toBe(700);
  });

  test('a scholarship without live awards may move to a full fund', async () => {
    const full = await fundWithScholarship(100);
    await createAward(full.scholarship, 100);
    const empty = await fundWithScholarship(null);
    await patch(`/api/v1/scholarships/${empty.scholarship}`, { fund_id: full.fund });
  });
});
