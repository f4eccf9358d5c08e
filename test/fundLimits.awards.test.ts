// A fund's award limit against award creates and changes, and the totals GET /funds/{id} reports.
import {
  awardBody,
  createAward,
  expectRefusedThreeWays,
  fieldErrors,
  fundWithScholarship,
  ids,
  insufficient,
  newScholarship,
  newStudents,
  patch,
  post,
  service,
  setUpFundLimitTests,
  totals,
  type ErrorEnvelope,
  type Fund,
} from './helpers/fundLimits.js';

setUpFundLimitTests();

describe('award creates and the fund limit', () => {
  test('awards fill a fund up to its limit exactly; one cent more is refused three ways and nothing is written', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    await createAward(scholarship, 600);
    const [student] = await newStudents(1);
    await expectRefusedThreeWays(
      'POST',
      '/api/v1/awards',
      awardBody(scholarship, student ?? 0, 400.01),
      insufficient('amount'),
    );
    await post('/api/v1/awards', awardBody(scholarship, student ?? 0, 400));
    expect(await totals(fund)).toEqual({
      gifts_received: 0,
      awards_committed: 1000,
      award_capacity_remaining: 0,
      pledged_outstanding: 0,
    });
  });

  test('the refusal says what the fund has left', async () => {
    const { scholarship } = await fundWithScholarship(100);
    await createAward(scholarship, 40.5);
    const [student] = await newStudents(1);
    const refused = await service.call<ErrorEnvelope>('POST', '/api/v1/awards', {
      body: awardBody(scholarship, student ?? 0, 60),
    });
    expect(refused.body.error.errors?.[0]?.message).toContain('59.5 remains');
  });

  test('a limit of 0 refuses every award; no limit takes the largest amount', async () => {
    const zero = await fundWithScholarship(0);
    const [student] = await newStudents(1);
    await expectRefusedThreeWays(
      'POST',
      '/api/v1/awards',
      awardBody(zero.scholarship, student ?? 0, 0.01),
      insufficient('amount'),
    );
    const unlimited = await fundWithScholarship(null);
    await createAward(unlimited.scholarship, 999_999_999_999.99);
    await createAward(unlimited.scholarship, 999_999_999_999.99);
    expect(await totals(unlimited.fund)).toEqual({
      gifts_received: 0,
      awards_committed: 1_999_999_999_999.98,
      award_capacity_remaining: null,
      pledged_outstanding: 0,
    });
  });

  test('a refusal on amount is reported alongside every other problem of the body', async () => {
    const { scholarship } = await fundWithScholarship(10);
    const [student] = await newStudents(1);
    const response = await service.call('POST', '/api/v1/awards', {
      body: { ...awardBody(scholarship, student ?? 0, 50), status: 'accepted', note: 'x' },
    });
    expect(response.status).toBe(422);
    expect(fieldErrors(response)).toEqual([
      { param: 'note', code: 'unknown_field' },
      { param: 'status', code: 'invalid_value' },
      { param: 'amount', code: 'insufficient_fund_balance' },
    ]);
  });

  test('declined and cancelled awards free their amount; accepted and disbursed ones keep it', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    const declined = await createAward(scholarship, 250);
    const cancelled = await createAward(scholarship, 250);
    const accepted = await createAward(scholarship, 250);
    const disbursed = await createAward(scholarship, 250);
    await patch(`/api/v1/awards/${accepted.id}`, { status: 'accepted' });
    await patch(`/api/v1/awards/${disbursed.id}`, { status: 'accepted' });
    await patch(`/api/v1/awards/${disbursed.id}`, { status: 'disbursed' });
    await patch(`/api/v1/awards/${cancelled.id}`, { status: 'accepted' });
    expect((await totals(fund)).award_capacity_remaining).toBe(0);

    await patch(`/api/v1/awards/${declined.id}`, { status: 'declined' });
    await patch(`/api/v1/awards/${cancelled.id}`, { status: 'cancelled' });
    expect(await totals(fund)).toEqual({
      gifts_received: 0,
      awards_committed: 500,
      award_capacity_remaining: 500,
      pledged_outstanding: 0,
    });
    await createAward(scholarship, 500);
    const [student] = await newStudents(1);
    await expectRefusedThreeWays(
      'POST',
      '/api/v1/awards',
      awardBody(scholarship, student ?? 0, 0.01),
      insufficient('amount'),
    );
  });

  test('gifts received count in totals but give no award capacity', async () => {
    const { fund, scholarship } = await fundWithScholarship(100);
    await post('/api/v1/gifts', {
      donor_id: ids.donor,
      amount: 5000,
      subject: 'Big gift',
      gift_date: '2026-05-01',
      fund_id: fund,
    });
    await createAward(scholarship, 60);
    expect(await totals(fund)).toEqual({
      gifts_received: 5000,
      awards_committed: 60,
      award_capacity_remaining: 40,
      pledged_outstanding: 0,
    });
    const [student] = await newStudents(1);
    await expectRefusedThreeWays(
      'POST',
      '/api/v1/awards',
      awardBody(scholarship, student ?? 0, 41),
      insufficient('amount'),
    );
  });

  test('totals appear only on GET /funds/{id}, not in create or update answers', async () => {
    const created = await post<Fund>('/api/v1/funds', { name: 'No totals', code: 'NO-TOTALS' });
    expect(created).not.toHaveProperty('totals');
    const patched = await patch<Fund>(`/api/v1/funds/${created.id}`, { award_limit: 5 });
    expect(patched).not.toHaveProperty('totals');
    expect(await totals(created.id)).toEqual({
      gifts_received: 0,
      awards_committed: 0,
      award_capacity_remaining: 5,
      pledged_outstanding: 0,
    });
  });
});

describe('changes to an award and the fund limit', () => {
  test('raising an amount past the limit is refused three ways; up to the limit and any decrease are accepted', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    const award = await createAward(scholarship, 500);
    await createAward(scholarship, 300);
    await expectRefusedThreeWays(
      'PATCH',
      `/api/v1/awards/${award.id}`,
      { amount: 700.01 },
      insufficient('amount'),
    );
    await patch(`/api/v1/awards/${award.id}`, { amount: 700 });
    expect((await totals(fund)).award_capacity_remaining).toBe(0);
    await patch(`/api/v1/awards/${award.id}`, { amount: 100 });
    expect((await totals(fund)).award_capacity_remaining).toBe(600);
  });

  test('in a full fund an award can still be accepted, disbursed, lowered or moved to a scholarship on the same fund', async () => {
    const { fund, scholarship } = await fundWithScholarship(1000);
    const sibling = await newScholarship(fund);
    const award = await createAward(scholarship, 1000);
    await patch(`/api/v1/awards/${award.id}`, { status: 'accepted', amount: 1000 });
    await patch(`/api/v1/awards/${award.id}`, { scholarship_id: sibling });
    await patch(`/api/v1/awards/${award.id}`, { status: 'disbursed', amount: 999 });
    expect((await totals(fund)).awards_committed).toBe(999);
  });

  test('moving an award to a scholarship on another fund is checked against that fund', async () => {
    const from = await fundWithScholarship(null);
    const small = await fundWithScholarship(400);
    const roomy = await fundWithScholarship(500);
    const award = await createAward(from.scholarship, 500);
    await expectRefusedThreeWays(
      'PATCH',
      `/api/v1/awards/${award.id}`,
      { scholarship_id: small.scholarship },
      insufficient('amount'),
    );
    await patch(`/api/v1/awards/${award.id}`, { scholarship_id: roomy.scholarship });
    expect((await totals(from.fund)).awards_committed).toBe(0);
    expect((await totals(roomy.fund)).award_capacity_remaining).toBe(0);
  });

  test('a declined award does not draw on the fund, whatever its amount becomes', async () => {
    const { fund, scholarship } = await fundWithScholarship(100);
    const award = await createAward(scholarship, 100);
    await patch(`/api/v1/awards/${award.id}`, { status: 'declined' });
    await patch(`/api/v1/awards/${award.id}`, { amount: 5000 });
    expect((await totals(fund)).awards_committed).toBe(0);
  });
});
