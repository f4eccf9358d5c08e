import {
  expectSameFailureThreeWays,
  fieldErrors,
  type ErrorEnvelope,
} from './helpers/threeWays.js';
import { ISO_MS } from './helpers/responses.js';
import { createFund, fundRow, ids, service, setUpFundTests, type Fund } from './helpers/funds.js';

setUpFundTests();

describe('fund CRUD', () => {
  test('create answers 201 with Location and the full fund with its defaults', async () => {
    const response = await service.call<Fund>('POST', '/api/v1/funds', {
      body: { name: '  General Fund ', code: ' GENERAL ' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('Location')).toBe(`/api/v1/funds/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'fund',
      name: 'General Fund',
      code: 'GENERAL',
      description: null,
      restriction: 'unrestricted',
      endowed: false,
      award_limit: null,
      status: 'active',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await fundRow(response.body.id)).toMatchObject({
      name: 'General Fund',
      code: 'GENERAL',
      description: null,
      restriction: 'unrestricted',
      endowed: false,
      award_limit: null,
      status: 'active',
    });
  });

  test('create stores every field, with the award limit exact', async () => {
    const body = {
      name: 'STEM Endowment',
      code: 'STEM-END',
      description: 'For students of science.',
      restriction: 'permanently_restricted',
      endowed: true,
      award_limit: 1_234_567.89,
      status: 'active',
    };
    const response = await service.call<Fund>('POST', '/api/v1/funds', { body });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject(body);
    expect(await fundRow(response.body.id)).toMatchObject({ ...body, award_limit: '1234567.89' });
    const fetched = await service.call<Fund>('GET', `/api/v1/funds/${response.body.id}`);
    expect(fetched.body.award_limit).toBe(1_234_567.89);
  });

  test('an award limit of 100.5 comes back as the number 100.5 and is stored as 100.50', async () => {
    const fund = await createFund({ code: 'HALF', award_limit: 100.5 });
    expect(fund.award_limit).toBe(100.5);
    expect((await fundRow(fund.id))?.award_limit).toBe('100.50');
  });

  test('a dry-run create answers 201 with id 0 and the same body, without Location, a row or holding the code', async () => {
    const body = {
      name: 'Arts Fund',
      code: 'ARTS',
      restriction: 'temporarily_restricted',
      award_limit: 500.25,
    };
    const before = await service.count('funds');
    const dry = await service.call<Fund>('POST', '/api/v1/funds?dry_run=true', { body });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(dry.headers.get('Location')).toBeNull();
    expect(dry.body.created_at).toMatch(ISO_MS);
    expect(await service.count('funds')).toBe(before);

    const real = await service.call<Fund>('POST', '/api/v1/funds', { body });
    expect(real.status).toBe(201);
    const strip = (fund: Fund) => ({
      ...fund,
      id: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(strip(dry.body)).toEqual(strip(real.body));
    expect(Object.keys(dry.body).sort()).toEqual(Object.keys(real.body).sort());

    const dryAgain = await service.call('POST', '/api/v1/funds', {
      body,
      headers: { 'Dry-Run': 'true' },
    });
    expect(dryAgain.status).toBe(422);
    expect(fieldErrors(dryAgain)).toEqual([{ param: 'code', code: 'already_in_use' }]);
  });

  test('retrieve returns the fund as created', async () => {
    const fund = await createFund({ code: 'READ-ME', description: 'Readable' });
    const fetched = await service.call<Fund>('GET', `/api/v1/funds/${fund.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toMatchObject(fund);
  });

  test('retrieve reports totals: gifts received, awards committed and capacity left', async () => {
    const fund = await createFund({ code: 'TOTALS', award_limit: 1000 });
    for (const amount of [10.25, 20.25]) {
      const gift = await service.call('POST', '/api/v1/gifts', {
        body: {
          donor_id: ids.donor,
          amount,
          subject: 'For totals',
          gift_date: '2026-06-01',
          fund_id: fund.id,
        },
      });
      expect(gift.status).toBe(201);
    }
    const fetched = await service.call<Fund & { totals: unknown }>(
      'GET',
      `/api/v1/funds/${fund.id}`,
    );
    expect(fetched.body.totals).toEqual({
      gifts_received: 30.5,
      awards_committed: 0,
      award_capacity_remaining: 1000,
      pledged_outstanding: 0,
    });
  });

  test('PATCH merges the sent fields into the stored fund', async () => {
    const fund = await createFund({
      code: 'MERGE',
      description: 'Before',
      award_limit: 300,
      endowed: true,
    });
    const patched = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { description: 'After', restriction: 'temporarily_restricted' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...fund,
      description: 'After',
      restriction: 'temporarily_restricted',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await fundRow(fund.id)).toMatchObject({
      code: 'MERGE',
      description: 'After',
      restriction: 'temporarily_restricted',
      endowed: true,
      award_limit: '300.00',
    });
    const fetched = await service.call<Fund>('GET', `/api/v1/funds/${fund.id}`);
    expect(fetched.body).toMatchObject(patched.body);
  });

  test('PATCH may resend the fund’s own code, change it to a free one, and clear the limit and description', async () => {
    const fund = await createFund({ code: 'RENAME-ME', description: 'Text', award_limit: 50 });
    const same = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { code: 'RENAME-ME' },
    });
    expect(same.status).toBe(200);
    const renamed = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { code: 'RENAMED', award_limit: null, description: '' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ code: 'RENAMED', award_limit: null, description: null });
    expect(await fundRow(fund.id)).toMatchObject({
      code: 'RENAMED',
      award_limit: null,
      description: null,
    });
    // The old code is free again.
    await createFund({ code: 'RENAME-ME' });
  });

  test('a dry-run PATCH returns the would-be fund and changes nothing', async () => {
    const fund = await createFund({ code: 'DRY-PATCH', award_limit: 10 });
    const rowBefore = await fundRow(fund.id);
    const dry = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { name: 'Preview', award_limit: 20.5, status: 'closed' },
      headers: { 'Dry-Run': 'true' },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...fund,
      name: 'Preview',
      award_limit: 20.5,
      status: 'closed',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await fundRow(fund.id)).toEqual(rowBefore);
    const gift = await service.call('POST', '/api/v1/gifts', {
      body: {
        donor_id: ids.donor,
        amount: 1,
        subject: 'Still open',
        gift_date: '2026-01-02',
        fund_id: fund.id,
      },
    });
    expect(gift.status).toBe(201);
  });

  test('closing a fund via PATCH refuses new gifts on it (reference_inactive); reopening accepts them again', async () => {
    const fund = await createFund({ code: 'CLOSE-ME' });
    const giftBody = {
      donor_id: ids.donor,
      amount: 15,
      subject: 'Late gift',
      gift_date: '2026-07-01',
      fund_id: fund.id,
    };
    const closed = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { status: 'closed' },
    });
    expect(closed.status).toBe(200);
    expect(closed.body.status).toBe('closed');
    expect((await fundRow(fund.id))?.status).toBe('closed');

    const gifts = () => service.count('gifts');
    await expectSameFailureThreeWays(
      service,
      '/api/v1/gifts',
      'POST',
      () => giftBody,
      [{ param: 'fund_id', code: 'reference_inactive' }],
      gifts,
    );

    const reopened = await service.call<Fund>('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { status: 'active' },
    });
    expect(reopened.status).toBe(200);
    const gift = await service.call('POST', '/api/v1/gifts', { body: giftBody });
    expect(gift.status).toBe(201);
  });

  test('funds have no DELETE: 405 with an Allow header, and the fund stays', async () => {
    const fund = await createFund({ code: 'KEEP-ME' });
    const response = await service.call<ErrorEnvelope>('DELETE', `/api/v1/funds/${fund.id}`);
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET, PATCH');
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'method_not_allowed',
    });
    expect(response.body.error.request_id).toBe(response.headers.get('Request-Id'));
    expect(await fundRow(fund.id)).not.toBeNull();

    const dry = await service.call<ErrorEnvelope>(
      'DELETE',
      `/api/v1/funds/${fund.id}?dry_run=true`,
    );
    expect(dry.status).toBe(405);
    expect(dry.headers.get('Allow')).toBe('GET, PATCH');

    const collection = await service.call<ErrorEnvelope>('DELETE', '/api/v1/funds');
    expect(collection.status).toBe(405);
    expect(collection.body.error.code).toBe('method_not_allowed');
  });
});

describe('a fund that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ['id 0', () => '0'],
    ['a negative id', () => '-1'],
    ["another institution's fund", () => String(ids.otherFund)],
  ];
  const calls: Array<[string, string, Record<string, unknown> | undefined]> = [
    ['GET', '', undefined],
    ['PATCH', '', { name: 'Hijack' }],
    ['PATCH', '?dry_run=true', { name: 'Hijack' }],
  ];
  const table = unknownIds.flatMap(([what, id]) =>
    calls.map(
      ([method, query, body]) => [`${method}${query} of ${what}`, method, query, body, id] as const,
    ),
  );

  test.each(table)('%s answers 404 resource_not_found', async (_name, method, query, body, id) => {
    const response = await service.call<ErrorEnvelope>(method, `/api/v1/funds/${id()}${query}`, {
      body,
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's fund is untouched, and cannot be used for a gift", async () => {
    expect(await fundRow(ids.otherFund)).toMatchObject({ name: 'Their fund', code: 'THEIRS' });
    const gift = await service.call('POST', '/api/v1/gifts', {
      body: {
        donor_id: ids.donor,
        amount: 3,
        subject: 'Wrong fund',
        gift_date: '2026-01-03',
        fund_id: ids.otherFund,
      },
    });
    expect(gift.status).toBe(422);
    expect(fieldErrors(gift)).toEqual([{ param: 'fund_id', code: 'reference_not_found' }]);
  });
});
