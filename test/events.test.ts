// Events (integration.md §1): every committed write makes exactly one, in its own transaction.
import { sql } from 'slonik';
import { z } from 'zod';
import { pruneEvents } from '../common/events/retention.js';
import {
  startTestService,
  type ApiResponse,
  type Tenant,
  type TestService,
} from './helpers/harness.js';
import { created } from './helpers/responses.js';

type Body = Record<string, unknown> & { id: number };

interface Event {
  id: string;
  object: 'event';
  type: string;
  created_at: string;
  request_id: string;
  api_key_id: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

interface EventPage {
  data: Event[];
  has_more: boolean;
  next_cursor: string | null;
}

let service: TestService;
let other: Tenant;
let donorId: number;
let fundId: number;

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  donorId = (await newDonor()).id;
  fundId = (
    await created<Body>(
      service.call('POST', '/api/v1/funds', { body: { name: 'General', code: 'GEN' } }),
    )
  ).id;
});

afterAll(async () => {
  await service?.close();
});

const newDonor = (key?: string) =>
  created<Body>(
    service.call('POST', '/api/v1/donors', {
      key,
      body: { role: 'Individual', first_name: 'Mary', last_name: 'Somerville' },
      headers: { 'Idempotency-Key': `donor-${Math.random()}` },
    }),
  );

const giftBody = (subject: string) => ({
  donor_id: donorId,
  amount: 100,
  subject,
  gift_date: '2026-06-01',
  fund_id: fundId,
});

const eventCount = async (institutionId = service.tenant.institutionId) =>
  service.count('events', institutionId);

/** The events of one record, oldest first, read straight from the table. */
const storedEventsOf = (objectType: string, objectId: number) =>
  service.db.any(sql.type(z.object({ type: z.string(), request_id: z.string() }))`
    SELECT type, request_id FROM events
    WHERE institution_id = ${service.tenant.institutionId}
      AND object_type = ${objectType} AND object_id = ${objectId}
    ORDER BY seq`);

const listEvents = (query = '', key?: string) =>
  service.call<EventPage>('GET', `/api/v1/events${query}`, key ? { key } : {});

/** The one event a write made, found through the API by the write's record. */
async function onlyEventOf(objectType: string, objectId: number): Promise<Event> {
  const page = await listEvents(`?object_type=${objectType}&object_id=${objectId}`);
  expect(page.status).toBe(200);
  return page.body.data[0]!;
}

/**
 * What every write's event must be: exactly one more event than before, of `type`, for the
 * write's request and key, whose record is what GET answers now (`read`, when the record has a
 * GET) and what the write answered.
 */
async function expectOneEvent(
  before: number,
  response: ApiResponse<Body>,
  type: string,
  read: string | null,
): Promise<Event> {
  expect(await eventCount()).toBe(before + 1);
  const [objectType] = type.split('.');
  const page = await listEvents('?limit=1');
  const event = page.body.data[0]!;
  expect(event).toMatchObject({
    object: 'event',
    type,
    request_id: response.headers.get('request-id'),
    api_key_id: service.tenant.apiKeyId,
  });
  expect(event.id).toMatch(/^evt_[0-9a-f]{32}$/);
  expect(event.data.object).toEqual(response.body);
  expect(event.data.object.object).toBe(objectType);
  if (read) {
    // GET of a donor or a fund adds figures it computes from other records (`giving`,
    // `totals`), which change without a write of the record: an event leaves them out.
    const {
      giving: _giving,
      totals: _totals,
      ...record
    } = (await service.call<Body>('GET', read)).body;
    expect(event.data.object).toEqual(record);
  }
  const one = await service.call<Event>('GET', `/api/v1/events/${event.id}`);
  expect(one.status).toBe(200);
  expect(one.body).toEqual(event);
  return event;
}

test('a create, two updates and a delete each make one event; each update carries the old values of what it changed, and the history names each request and key', async () => {
  let before = await eventCount();
  const create = await service.call<Body>('POST', '/api/v1/donors', {
    body: {
      role: 'Individual',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.org',
    },
  });
  expect(create.status).toBe(201);
  const id = create.body.id;
  const createdEvent = await expectOneEvent(
    before,
    create,
    'donor.created',
    `/api/v1/donors/${id}`,
  );
  expect(createdEvent.data.previous_attributes).toBeUndefined();

  before = await eventCount();
  const update = await service.call<Body>('PATCH', `/api/v1/donors/${id}`, {
    body: { first_name: 'Augusta Ada', email: 'augusta@example.org' },
  });
  expect(update.status).toBe(200);
  const updated = await expectOneEvent(before, update, 'donor.updated', `/api/v1/donors/${id}`);
  expect(updated.data.previous_attributes).toEqual({
    first_name: 'Ada',
    email: 'ada@example.org',
    display_name: create.body.display_name,
  });

  before = await eventCount();
  const second = await service.call<Body>('PATCH', `/api/v1/donors/${id}`, {
    body: { phone: '+44 20 7946 0000' },
  });
  expect(second.status).toBe(200);
  const updatedAgain = await expectOneEvent(
    before,
    second,
    'donor.updated',
    `/api/v1/donors/${id}`,
  );
  expect(updatedAgain.data.previous_attributes).toEqual({ phone: null });

  before = await eventCount();
  const remove = await service.call<Body>('DELETE', `/api/v1/donors/${id}`);
  expect(remove.status).toBe(200);
  const deleted = await expectOneEvent(before, remove, 'donor.deleted', null);
  expect(deleted.data.object).toEqual({ id, object: 'donor', deleted: true });

  // The record's history, newest first: the audit trail, each step with its request and key.
  const history = await listEvents(`?object_type=donor&object_id=${id}`);
  expect(
    history.body.data.map((event) => ({
      type: event.type,
      request_id: event.request_id,
      api_key_id: event.api_key_id,
      previous_attributes: event.data.previous_attributes,
    })),
  ).toEqual(
    [
      [remove, 'donor.deleted', undefined],
      [second, 'donor.updated', { phone: null }],
      [update, 'donor.updated', updated.data.previous_attributes],
      [create, 'donor.created', undefined],
    ].map(([response, type, previous]) => ({
      type,
      request_id: (response as typeof create).headers.get('request-id'),
      api_key_id: service.tenant.apiKeyId,
      previous_attributes: previous,
    })),
  );
});

test('a gift’s life: its create (one statement), refund, receipt, void and their events', async () => {
  let before = await eventCount();
  const create = await service.call<Body>('POST', '/api/v1/gifts', {
    body: giftBody('Annual fund'),
  });
  expect(create.status).toBe(201);
  const giftId = create.body.id;
  await expectOneEvent(before, create, 'gift.created', `/api/v1/gifts/${giftId}`);

  before = await eventCount();
  const refund = await service.call<Body>('POST', `/api/v1/gifts/${giftId}/refunds`, {
    body: { amount: 10, refund_date: '2026-06-02' },
  });
  expect(refund.status).toBe(201);
  // integration.md §1: a refund is the gift's event, carrying the gift as GET answers it now.
  expect(await eventCount()).toBe(before + 1);
  const refunded = (await listEvents('?limit=1')).body.data[0]!;
  expect(refunded).toMatchObject({
    type: 'gift.refunded',
    request_id: refund.headers.get('request-id'),
  });
  const giftNow = await service.call<Body>('GET', `/api/v1/gifts/${giftId}`);
  expect(refunded.data.object).toEqual(giftNow.body);
  expect(giftNow.body).toMatchObject({ amount_refunded: 10 });

  before = await eventCount();
  const receipt = await service.call<Body>('POST', '/api/v1/receipts', {
    body: { gift_id: giftId },
  });
  expect(receipt.status).toBe(201);
  const receiptPath = `/api/v1/receipts/${receipt.body.id}`;
  await expectOneEvent(before, receipt, 'receipt.issued', receiptPath);

  before = await eventCount();
  const voidReceipt = await service.call<Body>('POST', `${receiptPath}/void`, {
    body: { reason: 'Wrong address' },
  });
  expect(voidReceipt.status).toBe(200);
  await expectOneEvent(before, voidReceipt, 'receipt.voided', receiptPath);

  before = await eventCount();
  const voidGift = await service.call<Body>('POST', `/api/v1/gifts/${giftId}/void`, {
    body: { reason: 'Entered twice' },
  });
  expect(voidGift.status).toBe(200);
  await expectOneEvent(before, voidGift, 'gift.voided', `/api/v1/gifts/${giftId}`);

  const history = await storedEventsOf('gift', giftId);
  // The gift's whole history: its refund is its own event too.
  expect(history.map((event) => event.type)).toEqual([
    'gift.created',
    'gift.refunded',
    'gift.voided',
  ]);

  const plain = await created<Body>(
    service.call('POST', '/api/v1/gifts', { body: giftBody('To delete') }),
  );
  before = await eventCount();
  const remove = await service.call<Body>('DELETE', `/api/v1/gifts/${plain.id}`);
  expect(remove.status).toBe(200);
  await expectOneEvent(before, remove, 'gift.deleted', null);
});

test('no event for a dry run, an idempotent replay or a refused write', async () => {
  const before = await eventCount();
  const dry = await service.call<Body>('POST', '/api/v1/gifts?dry_run=true', {
    body: giftBody('Dry'),
  });
  expect(dry.status).toBe(201);
  const dryUpdate = await service.call<Body>('PATCH', `/api/v1/donors/${donorId}?dry_run=true`, {
    body: { first_name: 'Maria' },
  });
  expect(dryUpdate.status).toBe(200);
  expect(await eventCount()).toBe(before);

  const first = await service.call<Body>('POST', '/api/v1/gifts', {
    body: giftBody('Once'),
    headers: { 'Idempotency-Key': 'events-replay' },
  });
  expect(first.status).toBe(201);
  const replay = await service.call<Body>('POST', '/api/v1/gifts', {
    body: giftBody('Once'),
    headers: { 'Idempotency-Key': 'events-replay' },
  });
  expect(replay.status).toBe(201);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.body).toEqual(first.body);
  const update = { body: { first_name: 'Mary' }, headers: { 'Idempotency-Key': 'events-patch' } };
  expect((await service.call('PATCH', `/api/v1/donors/${donorId}`, update)).status).toBe(200);
  const patchReplay = await service.call('PATCH', `/api/v1/donors/${donorId}`, update);
  expect(patchReplay.headers.get('idempotent-replayed')).toBe('true');
  expect(await eventCount()).toBe(before + 2);
  expect(await storedEventsOf('gift', first.body.id)).toEqual([
    { type: 'gift.created', request_id: first.headers.get('request-id') },
  ]);

  const invalid = await service.call('POST', '/api/v1/gifts', {
    body: { ...giftBody('Invalid'), amount: -5 },
  });
  expect(invalid.status).toBe(422);
  const foreignDonor = await service.call('POST', '/api/v1/gifts', {
    body: { ...giftBody('Foreign'), donor_id: (await newDonor(other.key)).id },
  });
  expect(foreignDonor.status).toBe(422);
  const inUse = await service.call('DELETE', `/api/v1/donors/${donorId}`);
  expect(inUse.status).toBe(409);
  const gift = await created<Body>(
    service.call('POST', '/api/v1/gifts', { body: giftBody('Voided twice') }),
  );
  const voidPath = `/api/v1/gifts/${gift.id}/void`;
  expect((await service.call('POST', voidPath, { body: { reason: 'x' } })).status).toBe(200);
  expect((await service.call('POST', voidPath, { body: { reason: 'x' } })).status).toBe(409);
  expect(await eventCount()).toBe(before + 4);
  expect((await storedEventsOf('gift', gift.id)).map((event) => event.type)).toEqual([
    'gift.created',
    'gift.voided',
  ]);
});

test('another institution sees none of the events: an empty list, and 404 for an event id', async () => {
  const gift = await created<Body>(
    service.call('POST', '/api/v1/gifts', { body: giftBody('Private') }),
  );
  const event = await onlyEventOf('gift', gift.id);

  const theirs = await listEvents('', other.key);
  expect(theirs.status).toBe(200);
  // Their one write (a donor, in the test above) is all they see.
  expect(theirs.body.data.map((e) => e.type)).toEqual(['donor.created']);
  const byRecord = await listEvents(`?object_type=gift&object_id=${gift.id}`, other.key);
  expect(byRecord.body.data).toEqual([]);

  const foreign = await service.call('GET', `/api/v1/events/${event.id}`, { key: other.key });
  const missing = await service.call('GET', `/api/v1/events/evt_${'0'.repeat(32)}`, {
    key: other.key,
  });
  const malformed = await service.call('GET', '/api/v1/events/1', { key: other.key });
  for (const response of [foreign, missing, malformed]) {
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ error: { code: 'resource_not_found' } });
  }
  expect((foreign.body as { error: object }).error).toEqual({
    ...(missing.body as { error: object }).error,
    request_id: foreign.headers.get('request-id'),
  });
});

test('gift creates that commit together (many at once) each make exactly one event', async () => {
  const before = await eventCount();
  const responses = await Promise.all(
    Array.from({ length: 40 }, (_, index) =>
      service.call<Body>('POST', '/api/v1/gifts', {
        body: giftBody(`Together ${index}`),
        headers: { 'Idempotency-Key': `events-together-${index}` },
      }),
    ),
  );
  expect(responses.map((response) => response.status)).toEqual(responses.map(() => 201));
  expect(await eventCount()).toBe(before + responses.length);
  const events = await service.db.any(sql.type(
    z.object({
      object_id: z.number(),
      data: z.record(z.string(), z.unknown()),
      request_id: z.string(),
    }),
  )`
    SELECT object_id, data, request_id FROM events
    WHERE institution_id = ${service.tenant.institutionId} AND type = 'gift.created'`);
  for (const response of responses) {
    const mine = events.filter((event) => event.object_id === response.body.id);
    expect(mine).toEqual([
      {
        object_id: response.body.id,
        data: response.body,
        request_id: response.headers.get('request-id'),
      },
    ]);
  }
});

describe('GET /events filters and pages', () => {
  let events: Event[];

  beforeAll(async () => {
    const all: Event[] = [];
    let cursor: string | null = null;
    do {
      const page: ApiResponse<EventPage> = await listEvents(
        `?limit=7${cursor ? `&starting_after=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      all.push(...page.body.data);
      cursor = page.body.next_cursor;
    } while (cursor);
    events = all;
  });

  test('pages walk every event once, newest first', async () => {
    expect(events.length).toBe(await eventCount());
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    const times = events.map((event) => event.created_at);
    expect([...times].sort().reverse()).toEqual(times);
  });

  test('type: one type, or every type of one object', async () => {
    const voided = await listEvents('?type=gift.voided&limit=100');
    expect(voided.body.data).toEqual(events.filter((event) => event.type === 'gift.voided'));
    const gifts = await listEvents('?type=gift.*&limit=100');
    expect(gifts.body.data).toEqual(events.filter((event) => event.type.startsWith('gift.')));
    expect(new Set(gifts.body.data.map((event) => event.type))).toEqual(
      new Set(['gift.created', 'gift.refunded', 'gift.voided', 'gift.deleted']),
    );
  });

  test('created_from and created_to: inclusive instants or whole UTC days', async () => {
    const middle = events[Math.floor(events.length / 2)]!.created_at;
    const from = await listEvents(`?created_from=${middle}&limit=100`);
    expect(from.body.data).toEqual(events.filter((event) => event.created_at >= middle));
    const to = await listEvents(`?created_to=${encodeURIComponent(middle)}&limit=100`);
    expect(to.body.data).toEqual(events.filter((event) => event.created_at <= middle));
    const today = middle.slice(0, 10);
    const day = await listEvents(`?created_from=${today}&created_to=${today}&limit=100`);
    expect(day.body.data).toEqual(events.filter((event) => event.created_at.startsWith(today)));
    const offset = new Date(Date.parse(middle) + 3_600_000).toISOString().replace('Z', '+01:00');
    const shifted = await listEvents(`?created_from=${encodeURIComponent(offset)}&limit=100`);
    expect(shifted.body.data).toEqual(from.body.data);
    const none = await listEvents('?created_to=2000-01-01');
    expect(none.body).toMatchObject({ data: [], has_more: false });
  });

  test('a filter is pinned into the cursor', async () => {
    const first = await listEvents('?type=gift.*&limit=2');
    const second = await listEvents(`?limit=2&starting_after=${first.body.next_cursor}`);
    expect(second.body.data.every((event) => event.type.startsWith('gift.'))).toBe(true);
    expect([...first.body.data, ...second.body.data]).toEqual(
      events.filter((event) => event.type.startsWith('gift.')).slice(0, 4),
    );
  });

  test.each([
    ['?object_id=1', 400, 'parameter_missing', 'object_type'],
    ['?type=gift', 400, 'invalid_parameter', 'type'],
    ['?type=gift.exploded', 400, 'invalid_parameter', 'type'],
    ['?type=planet.*', 400, 'invalid_parameter', 'type'],
    ['?type=*', 400, 'invalid_parameter', 'type'],
    ['?object_type=planet', 400, 'invalid_parameter', 'object_type'],
    ['?object_type=gift&object_id=abc', 400, 'invalid_parameter', 'object_id'],
    ['?created_from=yesterday', 400, 'invalid_parameter', 'created_from'],
    ['?created_from=2026-02-30', 400, 'invalid_parameter', 'created_from'],
    ['?created_to=2026-11-21T25:00:00Z', 400, 'invalid_parameter', 'created_to'],
    ['?created_to=2026-11-21T10:00:00', 400, 'invalid_parameter', 'created_to'],
    ['?created_to=0000-01-01', 400, 'invalid_parameter', 'created_to'],
    ['?created_from=0001-01-01T00:00:00%2B01:00', 400, 'invalid_parameter', 'created_from'],
    ['?starting_after=nonsense', 400, 'invalid_cursor', 'starting_after'],
  ])('%s is %i %s', async (query, status, code, param) => {
    const before = await eventCount();
    const response = await listEvents(query);
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ error: { code, param } });
    expect(await eventCount()).toBe(before);
  });

  test('a cursor of another list is refused', async () => {
    const donors = await service.call<{ next_cursor: string }>('GET', '/api/v1/donors?limit=1');
    const response = await listEvents(`?starting_after=${donors.body.next_cursor}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: { code: 'invalid_cursor' } });
  });
});

test('retention: events older than EVENT_RETENTION_DAYS are pruned, newer ones stay', async () => {
  expect(service.config.EVENT_RETENTION_DAYS).toBe(90);
  const { institutionId, apiKeyId } = service.tenant;
  const old = sql.type(z.object({ seq: z.number() }))`
    INSERT INTO events (institution_id, type, object_type, object_id, data, request_id,
                        api_key_id, created_at)
    SELECT ${institutionId}, 'donor.created', 'donor', n, '{}', 'req_old', ${apiKeyId},
           now() - make_interval(days => 91) - make_interval(secs => n)
    FROM generate_series(1, 12) AS n
    RETURNING seq`;
  await service.db.any(old);
  const kept = await service.db.oneFirst(sql.type(z.object({ seq: z.number() }))`
    INSERT INTO events (institution_id, type, object_type, object_id, data, request_id,
                        api_key_id, created_at)
    VALUES (${institutionId}, 'donor.created', 'donor', 1, '{}', 'req_kept', ${apiKeyId},
            now() - make_interval(days => 89))
    RETURNING seq`);
  const before = await eventCount();

  expect(await pruneEvents(service.db, 90, 5)).toBe(12);
  expect(await eventCount()).toBe(before - 12);
  const left = await service.db.anyFirst(sql.type(z.object({ request_id: z.string() }))`
    SELECT DISTINCT request_id FROM events WHERE request_id IN ('req_old', 'req_kept')`);
  expect(left).toEqual(['req_kept']);
  expect(kept).toBeGreaterThan(0);
  expect(await pruneEvents(service.db, 90)).toBe(0);
});
