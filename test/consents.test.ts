// The consent ledger: POST and GET /donors/{id}/consents (constituents.md §4, first part).
import { sql } from 'slonik';
import { encodeCursor, type CursorPayload } from '../common/pagination/cursor.js';
import { create, other, service, setUpDonorTests, withKey } from './helpers/donors.js';
import { ISO_MS } from './helpers/responses.js';
import {
  byParam,
  expectSameErrorThreeWays,
  expectSameFailureThreeWays,
  fieldErrors,
} from './helpers/threeWays.js';

setUpDonorTests();

interface Consent {
  id: number;
  object: string;
  donor_id: number;
  channel: string;
  purpose: string | null;
  response: string;
  source: string;
  statement: string | null;
  captured_at: string;
  created_at: string;
}

interface Page {
  object: string;
  url: string;
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: Consent[];
}

const consentsPath = (donorId: number) => `/api/v1/donors/${donorId}/consents`;

const donor = async (key?: string) =>
  (await create({ role: 'Individual', first_name: 'Ada', last_name: 'Lovelace' }, key)).id;

const optIn = {
  channel: 'email',
  purpose: 'newsletter',
  response: 'opt_in',
  source: 'Website signup form',
  statement: 'Yes, send me the monthly newsletter by email.',
};

const storedConsents = () =>
  service.db.any(sql.unsafe`
    SELECT institution_id, donor_id, channel, purpose, response, source, statement, captured_at
    FROM consents ORDER BY id`);

const record = async (donorId: number, body: Record<string, unknown>) => {
  const response = await service.call<Consent>('POST', consentsPath(donorId), {
    body,
    headers: withKey(),
  });
  expect(response.status).toBe(201);
  return response.body;
};

const listOf = async (donorId: number, query = '') => {
  const page = await service.call<Page>('GET', `${consentsPath(donorId)}${query}`);
  expect(page.status).toBe(200);
  return page.body;
};

describe('POST /donors/{id}/consents', () => {
  test('201 with the consent, a Location that answers, the stored row and one consent.created event', async () => {
    const donorId = await donor();
    const before = Date.now();
    const response = await service.call<Consent>('POST', consentsPath(donorId), {
      body: { ...optIn, source: '  Website signup form  ' },
    });
    const after = Date.now();
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      object: 'consent',
      id: expect.any(Number),
      donor_id: donorId,
      channel: 'email',
      purpose: 'newsletter',
      response: 'opt_in',
      source: 'Website signup form',
      statement: optIn.statement,
      captured_at: expect.stringMatching(ISO_MS),
      created_at: expect.stringMatching(ISO_MS),
    });
    // Omitted, captured_at is the time of the request by the system clock.
    const captured = Date.parse(response.body.captured_at);
    expect(captured).toBeGreaterThanOrEqual(before - 1000);
    expect(captured).toBeLessThanOrEqual(after + 1000);
    const location = `${consentsPath(donorId)}/${response.body.id}`;
    expect(response.headers.get('Location')).toBe(location);
    const retrieved = await service.call<Consent>('GET', location);
    expect([retrieved.status, retrieved.body]).toEqual([200, response.body]);
    expect(await service.count('consents')).toBeGreaterThan(0);
    const events = await service.call<{ data: { type: string; data: { object: unknown } }[] }>(
      'GET',
      `/api/v1/events?object_type=consent&object_id=${response.body.id}`,
    );
    expect(events.status).toBe(200);
    expect(events.body.data.map((event) => event.type)).toEqual(['consent.created']);
    expect(events.body.data[0]!.data.object).toEqual(response.body);
  });

  test('an opt-out needs no statement; a sent captured_at in any zone is kept as UTC', async () => {
    const donorId = await donor();
    const body = await record(donorId, {
      channel: 'sms',
      purpose: null,
      response: 'opt_out',
      source: 'Reply STOP',
      captured_at: '2025-03-01T12:30:00+02:00',
    });
    expect(body).toMatchObject({
      purpose: null,
      statement: null,
      captured_at: '2025-03-01T10:30:00.000Z',
    });
  });

  test('real, dry run and replay agree; the dry run and the replay write nothing', async () => {
    const donorId = await donor();
    const body = { ...optIn, captured_at: '2026-01-02T03:04:05.678Z' };
    const count = await service.count('consents');
    const dry = await service.call<Consent>('POST', `${consentsPath(donorId)}?dry_run=true`, {
      body,
    });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(await service.count('consents')).toBe(count);
    const headers = withKey();
    const real = await service.call<Consent>('POST', consentsPath(donorId), { body, headers });
    const replay = await service.call<Consent>('POST', consentsPath(donorId), { body, headers });
    expect(real.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(real.body);
    expect(await service.count('consents')).toBe(count + 1);
    const { id, created_at: createdAt, ...rest } = real.body;
    expect(id).toBeGreaterThan(0);
    expect(createdAt).toEqual(expect.stringMatching(ISO_MS));
    const { id: dryId, created_at: dryCreated, ...dryRest } = dry.body;
    expect([dryId, dryCreated]).toEqual([0, expect.stringMatching(ISO_MS)]);
    expect(dryRest).toEqual(rest);
    // The same key with another body is a mismatch, not a second consent.
    const mismatch = await service.call('POST', consentsPath(donorId), {
      body: { ...body, source: 'Phone call' },
      headers,
    });
    expect(mismatch.status).toBe(422);
    expect(await service.count('consents')).toBe(count + 1);
  });

  test.each<[string, Record<string, unknown>, Array<{ param: string; code: string }>]>([
    ['channel missing', { ...optIn, channel: undefined }, [{ param: 'channel', code: 'required' }]],
    [
      'channel unknown',
      { ...optIn, channel: 'fax' },
      [{ param: 'channel', code: 'invalid_value' }],
    ],
    [
      'response missing',
      { ...optIn, response: undefined },
      [{ param: 'response', code: 'required' }],
    ],
    [
      'response unknown',
      { ...optIn, response: 'maybe' },
      [{ param: 'response', code: 'invalid_value' }],
    ],
    ['source missing', { ...optIn, source: undefined }, [{ param: 'source', code: 'required' }]],
    ['source blank', { ...optIn, source: '   ' }, [{ param: 'source', code: 'required' }]],
    [
      'source too long',
      { ...optIn, source: 'x'.repeat(101) },
      [{ param: 'source', code: 'too_long' }],
    ],
    [
      'purpose too long',
      { ...optIn, purpose: 'x'.repeat(61) },
      [{ param: 'purpose', code: 'too_long' }],
    ],
    ['purpose not text', { ...optIn, purpose: 7 }, [{ param: 'purpose', code: 'invalid_type' }]],
    [
      'opt_in without statement',
      { ...optIn, statement: undefined },
      [{ param: 'statement', code: 'required' }],
    ],
    [
      'opt_in with null statement',
      { ...optIn, statement: null },
      [{ param: 'statement', code: 'required' }],
    ],
    [
      'statement too long',
      { ...optIn, statement: 'x'.repeat(2001) },
      [{ param: 'statement', code: 'too_long' }],
    ],
    [
      'captured_at not a timestamp',
      { ...optIn, captured_at: 'yesterday' },
      [{ param: 'captured_at', code: 'invalid_format' }],
    ],
    [
      'captured_at without a zone',
      { ...optIn, captured_at: '2026-01-02T03:04:05' },
      [{ param: 'captured_at', code: 'invalid_format' }],
    ],
    [
      'captured_at null',
      { ...optIn, captured_at: null },
      [{ param: 'captured_at', code: 'invalid_type' }],
    ],
    [
      'captured_at 10 minutes ahead',
      () => ({ ...optIn, captured_at: new Date(Date.now() + 10 * 60_000).toISOString() }),
      [{ param: 'captured_at', code: 'out_of_range' }],
    ],
    [
      'a read-only field',
      { ...optIn, donor_id: 1 },
      [{ param: 'donor_id', code: 'unknown_field' }],
    ],
    [
      'everything at once',
      { purpose: 'x'.repeat(61), response: 'opt_in' },
      [
        { param: 'channel', code: 'required' },
        { param: 'purpose', code: 'too_long' },
        { param: 'source', code: 'required' },
        { param: 'statement', code: 'required' },
      ],
    ],
  ] as never)(
    '%s: the same 422 real, dry run and with a key; nothing written',
    async (_name, body, expected) => {
      const donorId = await donor();
      await expectSameFailureThreeWays(
        service,
        consentsPath(donorId),
        'POST',
        body,
        expected,
        storedConsents,
        {
          headers: () => withKey(),
        },
      );
      // A refusal is not stored under its key: the same key and body are judged again, alike.
      const before = await storedConsents();
      const headers = withKey();
      const make = () => (typeof body === 'function' ? (body as () => object)() : body);
      const first = await service.call('POST', consentsPath(donorId), { body: make(), headers });
      const again = await service.call('POST', consentsPath(donorId), { body: make(), headers });
      expect([first.status, again.status]).toEqual([422, 422]);
      expect(fieldErrors(again).sort(byParam)).toEqual(fieldErrors(first).sort(byParam));
      expect(await storedConsents()).toEqual(before);
    },
  );

  test('captured_at up to 5 minutes after the request is accepted (a clock slightly ahead)', async () => {
    const donorId = await donor();
    const ahead = new Date(Date.now() + 4 * 60_000).toISOString();
    expect((await record(donorId, { ...optIn, captured_at: ahead })).captured_at).toBe(ahead);
  });

  test('a missing donor and another institution’s donor are the same 404, three ways', async () => {
    const theirs = await donor(other.key);
    for (const donorId of [theirs, 999_999_999])
      await expectSameErrorThreeWays(
        service,
        consentsPath(donorId),
        'POST',
        optIn,
        { status: 404, code: 'resource_not_found' },
        storedConsents,
      );
    const foreign = await service.call('GET', consentsPath(theirs));
    const missing = await service.call('GET', consentsPath(999_999_999));
    expect([foreign.status, missing.status]).toEqual([404, 404]);
    const theirConsent = await service.call<Consent>('POST', consentsPath(theirs), {
      key: other.key,
      body: optIn,
    });
    expect(theirConsent.status).toBe(201);
    const one = await service.call('GET', `${consentsPath(theirs)}/${theirConsent.body.id}`);
    expect(one.status).toBe(404);
  });
});

describe('the ledger is append-only', () => {
  test.each([
    ['PUT', '', ['GET', 'POST']],
    ['PATCH', '', ['GET', 'POST']],
    ['DELETE', '', ['GET', 'POST']],
    ['PATCH', '/1', ['GET']],
    ['DELETE', '/1', ['GET']],
    ['PUT', '/1', ['GET']],
  ])(
    '%s /donors/{id}/consents%s answers 405 with an Allow header',
    async (method, tail, allowed) => {
      const donorId = await donor();
      const made = await record(donorId, optIn);
      const path = `${consentsPath(donorId)}${tail ? `/${made.id}` : ''}`;
      const response = await service.call(method as 'PATCH', path, { body: { source: 'x' } });
      expect(response.status).toBe(405);
      expect((response.body as { error: { code: string } }).error.code).toBe('method_not_allowed');
      const allow = String(response.headers.get('Allow') ?? '')
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== 'HEAD');
      expect(allow.sort()).toEqual([...allowed].sort());
      expect(await listOf(donorId)).toMatchObject({ data: [made] });
    },
  );
});

describe('GET /donors/{id}/consents', () => {
  test('lists the donor’s consents only, newest first, paging both ways with cursors of that donor', async () => {
    const [donorId, neighbour] = [await donor(), await donor()];
    await record(neighbour, optIn);
    const made = [];
    for (const channel of ['email', 'mail', 'phone', 'sms'])
      made.push(await record(donorId, { ...optIn, channel }));
    const ids = made.map((consent) => consent.id).reverse();
    const first = await listOf(donorId, '?limit=3');
    expect(first.object).toBe('list');
    expect(first.data.map((consent) => consent.id)).toEqual(ids.slice(0, 3));
    expect(first.data[0]).toEqual(made[3]);
    expect(first.has_more).toBe(true);
    const second = await listOf(donorId, `?limit=3&starting_after=${first.next_cursor}`);
    expect(second.data.map((consent) => consent.id)).toEqual(ids.slice(3));
    expect(second.has_more).toBe(false);
    const back = await listOf(donorId, `?limit=3&ending_before=${second.previous_cursor}`);
    expect(back.data.map((consent) => consent.id)).toEqual(ids.slice(0, 3));
    const elsewhere = await service.call(
      'GET',
      `${consentsPath(neighbour)}?starting_after=${first.next_cursor}`,
    );
    expect(elsewhere.status).toBe(400);
  });

  test('newest captured_at first: a consent captured earlier and recorded later takes its place; ties newest recorded first', async () => {
    const donorId = await donor();
    const at = (captured_at: string, channel = 'email') =>
      record(donorId, { ...optIn, channel, captured_at });
    const march = await at('2025-03-01T10:00:00.000Z');
    const june = await at('2025-06-01T10:00:00.000Z');
    const tieFirst = await at('2025-04-01T10:00:00.001Z', 'mail');
    const tieSecond = await at('2025-04-01T10:00:00.001Z', 'phone');
    // A millisecond earlier than the tie: only an exact cursor tells them apart.
    const justBefore = await at('2025-04-01T10:00:00.000Z', 'sms');
    const order = [june, tieSecond, tieFirst, justBefore, march].map((consent) => consent.id);
    expect((await listOf(donorId)).data.map((consent) => consent.id)).toEqual(order);

    // One at a time, forward then back: each once, in the same order.
    const forward: Page[] = [await listOf(donorId, '?limit=1')];
    while (forward.at(-1)!.next_cursor)
      forward.push(await listOf(donorId, `?limit=1&starting_after=${forward.at(-1)!.next_cursor}`));
    expect(forward.flatMap((page) => page.data.map((consent) => consent.id))).toEqual(order);
    expect(forward.at(-1)!.has_more).toBe(false);
    const backward: Page[] = [forward.at(-1)!];
    while (backward[0]!.previous_cursor)
      backward.unshift(
        await listOf(donorId, `?limit=2&ending_before=${backward[0]!.previous_cursor}`),
      );
    expect(backward.flatMap((page) => page.data.map((consent) => consent.id))).toEqual(order);
    expect(backward[0]!.previous_cursor).toBeNull();
  });

  test('a consent cursor without its captured_at, or with one of another form, is 400 invalid_cursor', async () => {
    const donorId = await donor();
    await record(donorId, optIn);
    await record(donorId, { ...optIn, channel: 'sms' });
    const next = (await listOf(donorId, '?limit=1')).next_cursor!;
    const payload = JSON.parse(
      Buffer.from(next.split('.')[0]!, 'base64url').toString(),
    ) as CursorPayload;
    expect(payload.v).toEqual(expect.any(String));
    const { v: _value, ...withoutValue } = payload;
    for (const forged of [withoutValue, { ...payload, v: 'yesterday' }]) {
      const cursor = encodeCursor(service.config.CURSOR_SECRET, forged);
      const response = await service.call<{ error: { code: string; param: string } }>(
        'GET',
        `${consentsPath(donorId)}?starting_after=${cursor}`,
      );
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        code: 'invalid_cursor',
        param: 'starting_after',
      });
    }
    // Re-signed unchanged, the cursor is as good as the one given.
    const same = encodeCursor(service.config.CURSOR_SECRET, payload);
    expect((await listOf(donorId, `?limit=1&starting_after=${same}`)).data).toHaveLength(1);
  });

  test('deleting the donor deletes its consents', async () => {
    const donorId = await donor();
    await record(donorId, optIn);
    const deleted = await service.call('DELETE', `/api/v1/donors/${donorId}`);
    expect(deleted.status).toBe(200);
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM consents WHERE donor_id = ${donorId}`,
      ),
    ).toBe(0);
  });
});
