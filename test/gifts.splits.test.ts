import { sql } from 'slonik';
import { expectSameErrorThreeWays, invalid } from './helpers/threeWays.js';
import { created } from './helpers/responses.js';
import {
  createDonor,
  createFund,
  giftBody,
  ids,
  other,
  service,
  setUpGiftTests,
  type Gift,
} from './helpers/gifts.js';

setUpGiftTests();

/** Funds, donors and an other-institution donor that the cases below split and credit to. */
const more = { fundB: 0, fundC: 0, spouse: 0, solicitor: 0, otherGiftOfDonor: 0 };

beforeAll(async () => {
  more.fundB = (await createFund('SCHOLARSHIPS')).id;
  more.fundC = (await createFund('ATHLETICS')).id;
  more.spouse = (await createDonor('spouse@example.org')).id;
  more.solicitor = (await createDonor('solicitor@example.org')).id;
});

const postGift = (body: Record<string, unknown>, key?: string) =>
  created<Gift>(service.call('POST', '/api/v1/gifts', { body, key }));

const storedSplit = (id: number) =>
  service.db.oneFirst(sql.unsafe`
    SELECT jsonb_build_object('designations', designations, 'soft_credits', soft_credits,
                              'fund_ids', to_jsonb(fund_ids),
                              'soft_credit_donor_ids', to_jsonb(soft_credit_donor_ids),
                              'matches_gift_id', matches_gift_id)
    FROM gifts WHERE id = ${id}`);

const fundTotal = async (fundId: number) =>
  (await service.call<{ totals: { gifts_received: number } }>('GET', `/api/v1/funds/${fundId}`))
    .body.totals.gifts_received;

const giving = async (donorId: number) =>
  (await service.call<{ giving: Record<string, unknown> }>('GET', `/api/v1/donors/${donorId}`)).body
    .giving;

describe('designations', () => {
  test('a split gift answers its designations, stores them, and counts in each fund', async () => {
    const beforeA = await fundTotal(ids.fund);
    const beforeB = await fundTotal(more.fundB);
    const gift = await postGift(
      giftBody({
        amount: 100.1,
        designations: [
          { fund_id: ids.fund, amount: 60.05 },
          { fund_id: more.fundB, amount: 40.05 },
        ],
      }),
    );
    expect(gift.fund_id).toBeNull();
    expect(gift.designations).toEqual([
      {
        fund_id: ids.fund,
        amount: 60.05,
        amount_refunded: 0,
        base_amount: 60.05,
        campaign_id: null,
        appeal_id: null,
      },
      {
        fund_id: more.fundB,
        amount: 40.05,
        amount_refunded: 0,
        base_amount: 40.05,
        campaign_id: null,
        appeal_id: null,
      },
    ]);
    expect(await storedSplit(gift.id)).toEqual({
      designations: [
        {
          fund_id: ids.fund,
          amount: 60.05,
          amount_refunded: 0,
          base_amount: 60.05,
          base_amount_refunded: 0,
        },
        {
          fund_id: more.fundB,
          amount: 40.05,
          amount_refunded: 0,
          base_amount: 40.05,
          base_amount_refunded: 0,
        },
      ],
      soft_credits: [],
      fund_ids: [ids.fund, more.fundB],
      soft_credit_donor_ids: [],
      matches_gift_id: null,
    });
    expect(await fundTotal(ids.fund)).toBeCloseTo(beforeA + 60.05, 2);
    expect(await fundTotal(more.fundB)).toBeCloseTo(beforeB + 40.05, 2);
    const fetched = await service.call<Gift>('GET', `/api/v1/gifts/${gift.id}`);
    expect(fetched.body).toEqual(gift);
  });

  test('fund_id is the shorthand for one designation of the whole amount, and follows the amount', async () => {
    const gift = await postGift(giftBody({ amount: 30, fund_id: more.fundC }));
    expect(gift.fund_id).toBe(more.fundC);
    expect(gift.designations).toEqual([
      {
        fund_id: more.fundC,
        amount: 30,
        amount_refunded: 0,
        base_amount: 30,
        campaign_id: null,
        appeal_id: null,
      },
    ]);
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { amount: 45.5 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.designations).toEqual([
      {
        fund_id: more.fundC,
        amount: 45.5,
        amount_refunded: 0,
        base_amount: 45.5,
        campaign_id: null,
        appeal_id: null,
      },
    ]);
    const cleared = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { fund_id: null },
    });
    expect(cleared.body).toMatchObject({ fund_id: null, designations: [] });
  });

  test('GET /gifts?fund_id= finds a gift by any of its designations', async () => {
    const split = await postGift(
      giftBody({
        amount: 10,
        designations: [
          { fund_id: more.fundB, amount: 3 },
          { fund_id: more.fundC, amount: 7 },
        ],
      }),
    );
    for (const fund of [more.fundB, more.fundC]) {
      const list = await service.call<{ data: Gift[] }>('GET', `/api/v1/gifts?fund_id=${fund}`);
      expect(list.status).toBe(200);
      expect(list.body.data.map((gift) => gift.id)).toContain(split.id);
      for (const gift of list.body.data)
        expect(gift.designations.map((part) => part.fund_id)).toContain(fund);
    }
  });

  test('PATCH of the amount of a split gift needs new designations', async () => {
    const gift = await postGift(
      giftBody({
        amount: 20,
        designations: [
          { fund_id: ids.fund, amount: 10 },
          { fund_id: more.fundB, amount: 10 },
        ],
      }),
    );
    const path = `/api/v1/gifts/${gift.id}`;
    await expectSameErrorThreeWays(
      service,
      path,
      'PATCH',
      { amount: 25 },
      invalid([{ param: 'designations', code: 'designation_total_mismatch' }]),
      () => storedSplit(gift.id),
    );
    const resplit = await service.call<Gift>('PATCH', path, {
      body: {
        amount: 25,
        designations: [
          { fund_id: ids.fund, amount: 5 },
          { fund_id: more.fundB, amount: 20 },
        ],
      },
    });
    expect(resplit.status).toBe(200);
    expect(resplit.body.designations).toEqual([
      {
        fund_id: ids.fund,
        amount: 5,
        amount_refunded: 0,
        base_amount: 5,
        campaign_id: null,
        appeal_id: null,
      },
      {
        fund_id: more.fundB,
        amount: 20,
        amount_refunded: 0,
        base_amount: 20,
        campaign_id: null,
        appeal_id: null,
      },
    ]);
  });

  test('a fund closed after the gift was made does not block editing the gift', async () => {
    const fund = await createFund('CLOSING');
    const gift = await postGift(giftBody({ amount: 12, fund_id: fund.id }));
    await service.call('PATCH', `/api/v1/funds/${fund.id}`, { body: { status: 'closed' } });
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { subject: 'Renamed', amount: 13 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.designations).toEqual([
      {
        fund_id: fund.id,
        amount: 13,
        amount_refunded: 0,
        base_amount: 13,
        campaign_id: null,
        appeal_id: null,
      },
    ]);
  });
});

describe('soft credits and giving', () => {
  test('soft credits are answered, counted in the credited donor’s giving, and never in fund totals', async () => {
    const donor = await createDonor('giver@example.org');
    const spouse = await createDonor('giver-spouse@example.org');
    const before = await fundTotal(ids.fund);
    const gift = await postGift(
      giftBody({
        donor_id: donor.id,
        amount: 500,
        fund_id: ids.fund,
        soft_credits: [
          { donor_id: spouse.id, amount: 500, reason: 'household' },
          { donor_id: more.solicitor, amount: 250, reason: 'solicitor' },
        ],
      }),
    );
    expect(gift.soft_credits).toEqual([
      { donor_id: spouse.id, amount: 500, reason: 'household', base_amount: 500 },
      { donor_id: more.solicitor, amount: 250, reason: 'solicitor', base_amount: 250 },
    ]);
    expect(await fundTotal(ids.fund)).toBeCloseTo(before + 500, 2);
    expect(await giving(spouse.id)).toEqual({
      total_amount: 0,
      gift_count: 0,
      first_gift_date: null,
      last_gift_date: null,
      soft_credit_total: 500,
      soft_credit_count: 1,
      pledged_outstanding: 0,
    });
    expect(await giving(donor.id)).toMatchObject({
      total_amount: 500,
      gift_count: 1,
      soft_credit_total: 0,
    });
    const credited = await service.call<{ data: Gift[] }>(
      'GET',
      `/api/v1/gifts?soft_credit_donor_id=${spouse.id}`,
    );
    expect(credited.body.data.map((item) => item.id)).toEqual([gift.id]);
  });

  test('a soft credit counts in proportion to its gift’s net amount: refunded in full 0, 40 of 100 refunded 60, voided 0', async () => {
    const donor = await createDonor('net-giver@example.org');
    const spouse = await createDonor('net-spouse@example.org');
    const credited = (amount: number) =>
      postGift(
        giftBody({
          donor_id: donor.id,
          amount,
          soft_credits: [{ donor_id: spouse.id, amount, reason: 'household' }],
        }),
      );
    const refund = async (giftId: number, amount: number) =>
      expect(
        (
          await service.call('POST', `/api/v1/gifts/${giftId}/refunds`, {
            body: { amount, refund_date: '2026-04-01' },
          })
        ).status,
      ).toBe(201);
    const spouseGiving = async () => {
      const { soft_credit_total, soft_credit_count } = await giving(spouse.id);
      return { soft_credit_total, soft_credit_count };
    };

    const whole = await credited(100);
    await refund(whole.id, 100);
    expect(await spouseGiving()).toEqual({ soft_credit_total: 0, soft_credit_count: 1 });

    const part = await credited(100);
    await refund(part.id, 40);
    expect(await spouseGiving()).toEqual({ soft_credit_total: 60, soft_credit_count: 2 });

    const voided = await credited(100);
    expect(await spouseGiving()).toEqual({ soft_credit_total: 160, soft_credit_count: 3 });
    const voiding = await service.call('POST', `/api/v1/gifts/${voided.id}/void`, {
      body: { reason: 'Entered twice' },
    });
    expect(voiding.status).toBe(200);
    expect(await spouseGiving()).toEqual({ soft_credit_total: 60, soft_credit_count: 2 });
    // The donor's own hard credit moves by the same refunds and void.
    expect(await giving(donor.id)).toMatchObject({ total_amount: 60, gift_count: 2 });
  });

  test('a partly refunded gift’s soft credits each count their share, rounded down to the cent', async () => {
    const donor = await createDonor('share-giver@example.org');
    const spouse = await createDonor('share-spouse@example.org');
    const solicitor = await createDonor('share-solicitor@example.org');
    const gift = await postGift(
      giftBody({
        donor_id: donor.id,
        amount: 30,
        soft_credits: [
          { donor_id: spouse.id, amount: 30, reason: 'household' },
          { donor_id: solicitor.id, amount: 10, reason: 'solicitor' },
        ],
      }),
    );
    const refunded = await service.call('POST', `/api/v1/gifts/${gift.id}/refunds`, {
      body: { amount: 10.01, refund_date: '2026-04-01' },
    });
    expect(refunded.status).toBe(201);
    // Net 19.99 of 30: the credit of the whole gift counts exactly the net; 10 × 19.99 / 30 is
    // 6.663…, counted 6.66.
    expect(await giving(spouse.id)).toMatchObject({ soft_credit_total: 19.99 });
    expect(await giving(solicitor.id)).toMatchObject({ soft_credit_total: 6.66 });
  });

  test('a soft-credited donor cannot be deleted while the credit stands', async () => {
    const spouse = await createDonor('kept-spouse@example.org');
    await postGift(
      giftBody({ soft_credits: [{ donor_id: spouse.id, amount: 25, reason: 'household' }] }),
    );
    const response = await service.call('DELETE', `/api/v1/donors/${spouse.id}`);
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ error: { code: 'resource_in_use' } });
  });
});

describe('matching gifts', () => {
  test('a match names the matched gift, which lists it in matched_by_gift_ids', async () => {
    const employer = await createDonor('employer@example.org');
    const employee = await postGift(giftBody({ amount: 100 }));
    const match = await postGift(
      giftBody({
        donor_id: employer.id,
        amount: 100,
        matches_gift_id: employee.id,
        soft_credits: [{ donor_id: ids.donor, amount: 100, reason: 'matching_gift' }],
      }),
    );
    expect(match.matches_gift_id).toBe(employee.id);
    const matched = await service.call<Gift>('GET', `/api/v1/gifts/${employee.id}`);
    expect(matched.body.matched_by_gift_ids).toEqual([match.id]);
    const listed = await service.call<{ data: Gift[] }>(
      'GET',
      `/api/v1/gifts?matches_gift_id=${employee.id}`,
    );
    expect(listed.body.data.map((gift) => gift.id)).toEqual([match.id]);
    const removal = await service.call('DELETE', `/api/v1/gifts/${employee.id}`);
    expect(removal.status).toBe(409);
    expect(removal.body).toMatchObject({ error: { code: 'resource_in_use' } });
  });
});

describe('bad splits, credits and matches: the real call and both dry runs give the same 422, and nothing is written', () => {
  const gifts = () => service.count('gifts');
  const cases: [string, () => Record<string, unknown>, Array<{ param: string; code: string }>][] = [
    [
      'designations that do not sum to the amount',
      () =>
        giftBody({
          amount: 100,
          designations: [
            { fund_id: ids.fund, amount: 60 },
            { fund_id: more.fundB, amount: 30 },
          ],
        }),
      [{ param: 'designations', code: 'designation_total_mismatch' }],
    ],
    [
      'a fund twice',
      () =>
        giftBody({
          amount: 100,
          designations: [
            { fund_id: ids.fund, amount: 50 },
            { fund_id: ids.fund, amount: 50 },
          ],
        }),
      [{ param: 'designations.1.fund_id', code: 'already_in_use' }],
    ],
    [
      'fund_id and designations together',
      () => giftBody({ fund_id: ids.fund, designations: [{ fund_id: ids.fund, amount: 25 }] }),
      [{ param: 'fund_id', code: 'not_allowed' }],
    ],
    [
      'another institution’s fund in a designation',
      () =>
        giftBody({
          amount: 20,
          designations: [
            { fund_id: ids.fund, amount: 10 },
            { fund_id: ids.otherFund, amount: 10 },
          ],
        }),
      [{ param: 'designations.1.fund_id', code: 'reference_not_found' }],
    ],
    [
      'a closed fund in a designation',
      () => giftBody({ amount: 25, designations: [{ fund_id: ids.closedFund, amount: 25 }] }),
      [{ param: 'designations.0.fund_id', code: 'reference_inactive' }],
    ],
    [
      'a designation of 0, and one with an unknown field',
      () =>
        giftBody({
          amount: 25,
          designations: [
            { fund_id: ids.fund, amount: 0 },
            { fund_id: more.fundB, amount: 25, note: 'x' },
          ],
        }),
      [
        { param: 'designations.0.amount', code: 'out_of_range' },
        { param: 'designations.1.note', code: 'unknown_field' },
      ],
    ],
    [
      '21 designations',
      () =>
        giftBody({
          amount: 21,
          designations: Array.from({ length: 21 }, (_, index) => ({
            fund_id: index + 1,
            amount: 1,
          })),
        }),
      [{ param: 'designations', code: 'out_of_range' }],
    ],
    [
      'designations that are not an array',
      () => giftBody({ designations: { fund_id: ids.fund, amount: 25 } }),
      [{ param: 'designations', code: 'invalid_type' }],
    ],
    [
      'a soft credit to the gift’s own donor',
      () => giftBody({ soft_credits: [{ donor_id: ids.donor, amount: 5, reason: 'other' }] }),
      [{ param: 'soft_credits.0.donor_id', code: 'not_allowed' }],
    ],
    [
      'a donor soft-credited twice',
      () =>
        giftBody({
          soft_credits: [
            { donor_id: more.spouse, amount: 5, reason: 'household' },
            { donor_id: more.spouse, amount: 5, reason: 'tribute' },
          ],
        }),
      [{ param: 'soft_credits.1.donor_id', code: 'already_in_use' }],
    ],
    [
      'a soft credit larger than the gift',
      () =>
        giftBody({
          amount: 25,
          soft_credits: [{ donor_id: more.spouse, amount: 25.01, reason: 'household' }],
        }),
      [{ param: 'soft_credits.0.amount', code: 'out_of_range' }],
    ],
    [
      'a soft credit with an unknown reason, and one to another institution’s donor',
      () =>
        giftBody({
          soft_credits: [
            { donor_id: more.spouse, amount: 5, reason: 'friend' },
            { donor_id: ids.otherDonor, amount: 5, reason: 'other' },
          ],
        }),
      // A field that fails its own validation is not looked up further.
      [{ param: 'soft_credits.0.reason', code: 'invalid_value' }],
    ],
    [
      'a soft credit to another institution’s donor',
      () => giftBody({ soft_credits: [{ donor_id: ids.otherDonor, amount: 5, reason: 'other' }] }),
      [{ param: 'soft_credits.0.donor_id', code: 'reference_not_found' }],
    ],
    [
      'a match of a gift by the same donor',
      () => giftBody({ matches_gift_id: more.otherGiftOfDonor }),
      [{ param: 'matches_gift_id', code: 'invalid_value' }],
    ],
    [
      'a match of another institution’s gift',
      () => giftBody({ donor_id: more.spouse, matches_gift_id: ids.otherGift }),
      [{ param: 'matches_gift_id', code: 'reference_not_found' }],
    ],
    [
      'a benefit larger than the gift',
      () => giftBody({ amount: 100, benefit_amount: 100.01 }),
      [{ param: 'benefit_amount', code: 'out_of_range' }],
    ],
  ];

  beforeAll(async () => {
    more.otherGiftOfDonor = (await postGift(giftBody({ amount: 5 }))).id;
  });

  test.each(cases)('%s', async (_name, body, errors) => {
    await expectSameErrorThreeWays(service, '/api/v1/gifts', 'POST', body, invalid(errors), gifts);
  });

  test('another institution cannot see or use the split gift’s ids', async () => {
    const theirs = await postGift(
      { donor_id: ids.otherDonor, amount: 5, subject: 'Theirs', gift_date: '2026-01-01' },
      other.key,
    );
    const response = await service.call('POST', '/api/v1/gifts', {
      body: giftBody({ donor_id: more.spouse, matches_gift_id: theirs.id }),
    });
    const missing = await service.call('POST', '/api/v1/gifts', {
      body: giftBody({ donor_id: more.spouse, matches_gift_id: 999_999_999 }),
    });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({
      error: { errors: [{ param: 'matches_gift_id', code: 'reference_not_found' }] },
    });
    const strip = (body: unknown) => ({
      ...(body as { error: object }).error,
      request_id: undefined,
    });
    expect(strip(response.body)).toEqual(strip(missing.body));
  });
});
