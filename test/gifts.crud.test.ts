import { fieldErrors, type ErrorEnvelope } from './helpers/threeWays.js';
import { created, ISO_MS } from './helpers/responses.js';
import {
  createDonor,
  createFund,
  giftBody,
  freshMoney,
  giftRow,
  ids,
  service,
  setUpGiftTests,
  type Gift,
  other,
} from './helpers/gifts.js';

setUpGiftTests();

describe('gift CRUD', () => {
  test('create answers 201 with Location and the full gift, and writes the row', async () => {
    const before = Date.now();
    const response = await service.call<Gift>('POST', '/api/v1/gifts', {
      body: giftBody({
        amount: 250.75,
        type: 'check',
        check_number: '1001',
        fund_id: ids.fund,
        subject: 'Gala',
      }),
    });
    expect(response.status).toBe(201);
    const gift = response.body;
    expect(response.headers.get('Location')).toBe(`/api/v1/gifts/${gift.id}`);
    expect(gift).toEqual({
      id: expect.any(Number),
      object: 'gift',
      donor_id: ids.donor,
      amount: 250.75,
      currency: 'USD',
      subject: 'Gala',
      gift_date: '2026-03-15',
      type: 'check',
      check_number: '1001',
      fund_id: ids.fund,
      ...freshMoney(250.75, ids.fund),
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(gift.id).toBeGreaterThan(0);
    expect(Date.parse(gift.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(await giftRow(gift.id)).toMatchObject({
      donor_id: ids.donor,
      amount: '250.75',
      currency: 'USD',
      subject: 'Gala',
      gift_date: '2026-03-15',
      type: 'check',
      check_number: '1001',
      fund_id: ids.fund,
    });
  });

  test('create fills the defaults: cash, no check number, no fund', async () => {
    const response = await service.call<Gift>('POST', '/api/v1/gifts', { body: giftBody() });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      type: 'cash',
      check_number: null,
      fund_id: null,
      currency: 'USD',
    });
  });

  test('a dry-run create answers 201 with id 0 and the same body, without Location or a row', async () => {
    const body = giftBody({ amount: 88.8, type: 'check', check_number: 'A-7', fund_id: ids.fund });
    const before = await service.count('gifts');
    const startedAt = Date.now();
    const dry = await service.call<Gift>('POST', '/api/v1/gifts', {
      body,
      headers: { 'Dry-Run': 'true' },
    });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(dry.headers.get('Location')).toBeNull();
    expect(dry.body.created_at).toMatch(ISO_MS);
    expect(Date.parse(dry.body.created_at)).toBeGreaterThanOrEqual(startedAt - 1000);
    expect(await service.count('gifts')).toBe(before);

    const real = await service.call<Gift>('POST', '/api/v1/gifts', { body });
    expect(real.status).toBe(201);
    const strip = (gift: Gift) => ({
      ...gift,
      id: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(strip(dry.body)).toEqual(strip(real.body));
    expect(Object.keys(dry.body).sort()).toEqual(Object.keys(real.body).sort());
  });

  test('retrieve returns the gift as created', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', { body: giftBody({ fund_id: ids.fund }) }),
    );
    const fetched = await service.call<Gift>('GET', `/api/v1/gifts/${gift.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(gift);
  });

  test('PATCH merges the sent fields into the stored gift', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', {
        body: giftBody({ type: 'check', check_number: '500', fund_id: ids.fund, amount: 40 }),
      }),
    );
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { subject: '  Updated subject ', gift_date: '2026-05-01' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...gift,
      subject: 'Updated subject',
      gift_date: '2026-05-01',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(gift.updated_at));
    expect(await giftRow(gift.id)).toMatchObject({
      subject: 'Updated subject',
      gift_date: '2026-05-01',
      type: 'check',
      check_number: '500',
      amount: '40.00',
      fund_id: ids.fund,
    });
    const fetched = await service.call<Gift>('GET', `/api/v1/gifts/${gift.id}`);
    expect(fetched.body).toEqual(patched.body);
  });

  test('PATCH revalidates the merged gift: a check number must go when the type stops being check', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', {
        body: giftBody({ type: 'check', check_number: '1234' }),
      }),
    );
    const refused = await service.call('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { type: 'cash' },
    });
    expect(refused.status).toBe(422);
    expect(fieldErrors(refused)).toEqual([{ param: 'check_number', code: 'not_allowed' }]);
    expect(await giftRow(gift.id)).toMatchObject({ type: 'check', check_number: '1234' });

    const fixed = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { type: 'cash', check_number: null },
    });
    expect(fixed.status).toBe(200);
    expect(fixed.body).toMatchObject({ type: 'cash', check_number: null });
    expect(await giftRow(gift.id)).toMatchObject({ type: 'cash', check_number: null });

    const addBack = await service.call('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { check_number: '99' },
    });
    expect(addBack.status).toBe(422);
    expect(fieldErrors(addBack)).toEqual([{ param: 'check_number', code: 'not_allowed' }]);
  });

  test('PATCH can move a gift to another donor and fund of the institution', async () => {
    const gift = await created<Gift>(service.call('POST', '/api/v1/gifts', { body: giftBody() }));
    const donor = await createDonor('mover@example.org');
    const fund = await createFund('MOVE-TO');
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { donor_id: donor.id, fund_id: fund.id },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ donor_id: donor.id, fund_id: fund.id });
    const cleared = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { fund_id: null },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.fund_id).toBeNull();
    expect(await giftRow(gift.id)).toMatchObject({ donor_id: donor.id, fund_id: null });
  });

  test('a gift on a fund that was closed later can still be edited without naming the fund', async () => {
    const fund = await createFund('CLOSING-LATER');
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', { body: giftBody({ fund_id: fund.id }) }),
    );
    const closed = await service.call('PATCH', `/api/v1/funds/${fund.id}`, {
      body: { status: 'closed' },
    });
    expect(closed.status).toBe(200);
    const patched = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}`, {
      body: { subject: 'Still fine' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ subject: 'Still fine', fund_id: fund.id });
  });

  test('a dry-run PATCH returns the would-be gift and changes nothing', async () => {
    const gift = await created<Gift>(
      service.call('POST', '/api/v1/gifts', { body: giftBody({ amount: 10 }) }),
    );
    const rowBefore = await giftRow(gift.id);
    const dry = await service.call<Gift>('PATCH', `/api/v1/gifts/${gift.id}?dry_run=true`, {
      body: { amount: 12.34, subject: 'Preview' },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...gift,
      amount: 12.34,
      base_amount: 12.34,
      net_amount: 12.34,
      subject: 'Preview',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await giftRow(gift.id)).toEqual(rowBefore);
    const fetched = await service.call<Gift>('GET', `/api/v1/gifts/${gift.id}`);
    expect(fetched.body).toEqual(gift);
  });

  test('DELETE answers the deletion object and removes the row', async () => {
    const gift = await created<Gift>(service.call('POST', '/api/v1/gifts', { body: giftBody() }));
    const response = await service.call('DELETE', `/api/v1/gifts/${gift.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: gift.id, object: 'gift', deleted: true });
    expect(await giftRow(gift.id)).toBeNull();
    expect((await service.call('GET', `/api/v1/gifts/${gift.id}`)).status).toBe(404);
    const again = await service.call<ErrorEnvelope>('DELETE', `/api/v1/gifts/${gift.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('resource_not_found');
  });

  test('a dry-run DELETE answers the same deletion object and keeps the row', async () => {
    const gift = await created<Gift>(service.call('POST', '/api/v1/gifts', { body: giftBody() }));
    const ways: Array<{ path: string; headers: Record<string, string> }> = [
      { path: '?dry_run=true', headers: {} },
      { path: '', headers: { 'Dry-Run': 'TRUE' } },
    ];
    for (const options of ways) {
      const response = await service.call('DELETE', `/api/v1/gifts/${gift.id}${options.path}`, {
        headers: options.headers,
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id: gift.id, object: 'gift', deleted: true });
    }
    expect(await giftRow(gift.id)).not.toBeNull();
    expect((await service.call('GET', `/api/v1/gifts/${gift.id}`)).status).toBe(200);
  });
});

describe('a gift that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ['id 0', () => '0'],
    ['a fractional id', () => '1.5'],
    ["another institution's gift", () => String(ids.otherGift)],
  ];
  const calls: Array<[string, string, Record<string, unknown> | undefined]> = [
    ['GET', '', undefined],
    ['PATCH', '', { subject: 'Hijack' }],
    ['PATCH', '?dry_run=true', { subject: 'Hijack' }],
    ['DELETE', '', undefined],
    ['DELETE', '?dry_run=true', undefined],
  ];
  const table = unknownIds.flatMap(([what, id]) =>
    calls.map(
      ([method, query, body]) => [`${method}${query} of ${what}`, method, query, body, id] as const,
    ),
  );

  test.each(table)('%s answers 404 resource_not_found', async (_name, method, query, body, id) => {
    const response = await service.call<ErrorEnvelope>(method, `/api/v1/gifts/${id()}${query}`, {
      body,
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's gift is untouched by those attempts", async () => {
    expect(await giftRow(ids.otherGift)).toMatchObject({ subject: 'Theirs', amount: '5.00' });
    const theirs = await service.call<Gift>('GET', `/api/v1/gifts/${ids.otherGift}`, {
      key: other.key,
    });
    expect(theirs.status).toBe(200);
    expect(theirs.body.subject).toBe('Theirs');
  });
});
