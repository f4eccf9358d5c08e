// Tributes on gifts (fundraising.md §4): the field, its acknowledgement and the list filter.
import { sql } from 'slonik';
import { created, ISO_MS } from './helpers/responses.js';
import {
  createDonor,
  giftBody,
  ids,
  other,
  service,
  setUpGiftTests,
  type Case,
  type Gift,
} from './helpers/gifts.js';
import { expectSameErrorThreeWays, expectSameFailureThreeWays } from './helpers/threeWays.js';

setUpGiftTests();

interface Tribute {
  type: string;
  honoree_name: string;
  honoree_donor_id: number | null;
  notify: { name: string; email: string | null; address: Record<string, unknown> | null } | null;
  message: string | null;
  acknowledgement: 'pending' | 'sent' | 'not_required';
  sent_on: string | null;
}
type TributeGift = Gift & { tribute: Tribute | null };

interface Page {
  data: TributeGift[];
  has_more: boolean;
  next_cursor: string | null;
}

const giftsPath = '/api/v1/gifts';
const ackPath = (id: number) => `${giftsPath}/${id}/tribute-acknowledgement`;

const postGift = (overrides: Record<string, unknown> = {}) =>
  created<TributeGift>(service.call('POST', giftsPath, { body: giftBody(overrides) }));

const getGift = async (id: number) =>
  (await service.call<TributeGift>('GET', `${giftsPath}/${id}`)).body;

const notifyByEmail = { name: 'The Hopper family', email: 'family@example.org' };
const inMemory = (extra: Record<string, unknown> = {}) => ({
  type: 'in_memory_of',
  honoree_name: 'Grace Hopper',
  ...extra,
});

/** The tribute columns of the gift as stored. */
const storedTribute = (id: number) =>
  service.db.one(sql.unsafe`
    SELECT tribute, tribute_honoree_donor_id, tribute_acknowledgement,
           tribute_sent_on::text AS tribute_sent_on
    FROM gifts WHERE id = ${id}`);

/** Every gift's tribute columns and the number of events: what a refused write leaves alone. */
const snapshot = async () => ({
  gifts: await service.db.any(sql.unsafe`
    SELECT id, tribute, tribute_honoree_donor_id, tribute_acknowledgement,
           tribute_sent_on::text AS tribute_sent_on, updated_at::text AS updated_at
    FROM gifts ORDER BY id`),
  events: await service.db.oneFirst(sql.unsafe`SELECT count(*) FROM events`),
});

interface Event {
  type: string;
  data: { object: unknown; previous_attributes?: Record<string, unknown> };
}

/** The gift's events as GET /events answers them, oldest first. */
const eventsOf = async (id: number) =>
  (
    await service.call<{ data: Event[] }>('GET', `/api/v1/events?object_type=gift&object_id=${id}`)
  ).body.data
    .map(({ type, data }) => ({ type, data }))
    .reverse();

describe('a gift with a tribute', () => {
  test('in memory of a donor, with notify by email: 201, pending, stored, and GET answers the same', async () => {
    const honoree = await createDonor('grace@example.org');
    const response = await service.call<TributeGift>('POST', giftsPath, {
      body: giftBody({
        tribute: inMemory({
          honoree_donor_id: honoree.id,
          notify: { ...notifyByEmail, email: ' family@example.org ' },
          message: '  In loving memory  ',
        }),
      }),
    });
    expect(response.status).toBe(201);
    const gift = response.body;
    expect(gift.tribute).toEqual({
      type: 'in_memory_of',
      honoree_name: 'Grace Hopper',
      honoree_donor_id: honoree.id,
      notify: { name: 'The Hopper family', email: 'family@example.org', address: null },
      message: 'In loving memory',
      acknowledgement: 'pending',
      sent_on: null,
    });
    expect(await getGift(gift.id)).toEqual(gift);
    expect(await storedTribute(gift.id)).toEqual({
      tribute: {
        type: 'in_memory_of',
        honoree_name: 'Grace Hopper',
        notify: { name: 'The Hopper family', email: 'family@example.org', address: null },
        message: 'In loving memory',
      },
      tribute_honoree_donor_id: honoree.id,
      tribute_acknowledgement: 'pending',
      tribute_sent_on: null,
    });
  });

  test('in honor of someone, without notify: not_required, the optional parts null', async () => {
    const gift = await postGift({ tribute: { type: 'in_honor_of', honoree_name: 'Ms. Frizzle' } });
    expect(gift.tribute).toEqual({
      type: 'in_honor_of',
      honoree_name: 'Ms. Frizzle',
      honoree_donor_id: null,
      notify: null,
      message: null,
      acknowledgement: 'not_required',
      sent_on: null,
    });
    expect(await storedTribute(gift.id)).toMatchObject({
      tribute_honoree_donor_id: null,
      tribute_acknowledgement: 'not_required',
    });
  });

  test('in honor of someone, notified by post: pending, the address as a donor’s', async () => {
    const gift = await postGift({
      tribute: {
        type: 'in_honor_of',
        honoree_name: 'Ms. Frizzle',
        notify: { name: 'Walkerville School', address: { line1: '1 Bus Lane', country: 'US' } },
      },
    });
    expect(gift.tribute?.notify).toEqual({
      name: 'Walkerville School',
      email: null,
      address: {
        line1: '1 Bus Lane',
        line2: null,
        city: null,
        region: null,
        postal_code: null,
        country: 'US',
      },
    });
    expect(gift.tribute?.acknowledgement).toBe('pending');
  });

  test('no tribute is null, stored as null', async () => {
    const gift = await postGift();
    expect(gift.tribute).toBeNull();
    expect(await storedTribute(gift.id)).toEqual({
      tribute: null,
      tribute_honoree_donor_id: null,
      tribute_acknowledgement: null,
      tribute_sent_on: null,
    });
  });

  test('a dry run answers the tribute it would store, and writes nothing', async () => {
    const before = await snapshot();
    const response = await service.call<TributeGift>('POST', `${giftsPath}?dry_run=true`, {
      body: giftBody({ tribute: inMemory({ notify: notifyByEmail }) }),
    });
    expect(response.status).toBe(201);
    expect(response.body.id).toBe(0);
    expect(response.body.tribute).toMatchObject({ acknowledgement: 'pending', sent_on: null });
    expect(await snapshot()).toEqual(before);
  });

  test('another institution’s donor as honoree is as absent as a missing one', async () => {
    for (const honoree of [ids.otherDonor, 999999])
      await expectSameFailureThreeWays(
        service,
        giftsPath,
        'POST',
        giftBody({ tribute: inMemory({ honoree_donor_id: honoree }) }),
        [{ param: 'tribute.honoree_donor_id', code: 'reference_not_found' }],
        snapshot,
      );
  });

  test.each<Case>([
    [
      'no honoree_name',
      () => ({ tribute: { type: 'in_honor_of' } }),
      [{ param: 'tribute.honoree_name', code: 'required' }],
    ],
    [
      'a blank honoree_name',
      () => ({ tribute: inMemory({ honoree_name: '   ' }) }),
      [{ param: 'tribute.honoree_name', code: 'required' }],
    ],
    [
      'a honoree_name too long',
      () => ({ tribute: inMemory({ honoree_name: 'x'.repeat(201) }) }),
      [{ param: 'tribute.honoree_name', code: 'too_long' }],
    ],
    [
      'no type',
      () => ({ tribute: { honoree_name: 'Grace Hopper' } }),
      [{ param: 'tribute.type', code: 'invalid_value' }],
    ],
    [
      'an unknown type',
      () => ({ tribute: inMemory({ type: 'in_praise_of' }) }),
      [{ param: 'tribute.type', code: 'invalid_value' }],
    ],
    [
      'notify without a name',
      () => ({ tribute: inMemory({ notify: { email: 'family@example.org' } }) }),
      [{ param: 'tribute.notify.name', code: 'required' }],
    ],
    [
      'notify with neither email nor address',
      () => ({ tribute: inMemory({ notify: { name: 'The family' } }) }),
      [{ param: 'tribute.notify', code: 'required' }],
    ],
    [
      'notify with a null email and no address',
      () => ({ tribute: inMemory({ notify: { name: 'The family', email: null } }) }),
      [{ param: 'tribute.notify', code: 'required' }],
    ],
    [
      'a bad email',
      () => ({ tribute: inMemory({ notify: { name: 'The family', email: 'not-an-email' } }) }),
      [{ param: 'tribute.notify.email', code: 'invalid_format' }],
    ],
    [
      'an address without line1',
      () => ({ tribute: inMemory({ notify: { name: 'The family', address: { city: 'Paris' } } }) }),
      [{ param: 'tribute.notify.address.line1', code: 'required' }],
    ],
    [
      'an address with a bad country',
      () => ({
        tribute: inMemory({
          notify: { name: 'The family', address: { line1: '1 Rue', country: 'XX' } },
        }),
      }),
      [{ param: 'tribute.notify.address.country', code: 'invalid_value' }],
    ],
    [
      'a message too long',
      () => ({ tribute: inMemory({ message: 'x'.repeat(1001) }) }),
      [{ param: 'tribute.message', code: 'too_long' }],
    ],
    [
      'unknown keys inside the tribute and its notify',
      () => ({
        tribute: inMemory({
          acknowledgement: 'sent',
          notify: { ...notifyByEmail, phone: '555-0100' },
        }),
      }),
      [
        { param: 'tribute.acknowledgement', code: 'unknown_field' },
        { param: 'tribute.notify.phone', code: 'unknown_field' },
      ],
    ],
    [
      'a tribute that is not an object',
      () => ({ tribute: 'Grace Hopper' }),
      [{ param: 'tribute', code: 'invalid_type' }],
    ],
    [
      'a bad honoree_donor_id',
      () => ({ tribute: inMemory({ honoree_donor_id: 'one' }) }),
      [{ param: 'tribute.honoree_donor_id', code: 'invalid_type' }],
    ],
  ])('%s: 422 on create and on PATCH, and nothing changes', async (_name, body, expected) => {
    await expectSameFailureThreeWays(
      service,
      giftsPath,
      'POST',
      () => giftBody(body()),
      expected,
      snapshot,
    );
    const gift = await postGift();
    await expectSameFailureThreeWays(
      service,
      `${giftsPath}/${gift.id}`,
      'PATCH',
      body,
      expected,
      snapshot,
    );
  });
});

describe('POST /gifts/{id}/tribute-acknowledgement', () => {
  const pendingGift = () => postGift({ tribute: inMemory({ notify: notifyByEmail }) });

  test('200 with the gift, now sent on that date; one gift.tribute_acknowledged event', async () => {
    const gift = await pendingGift();
    const response = await service.call<TributeGift>('POST', ackPath(gift.id), {
      body: { sent_on: '2026-03-20' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...gift,
      tribute: { ...gift.tribute, acknowledgement: 'sent', sent_on: '2026-03-20' },
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(response.body.updated_at > gift.updated_at).toBe(true);
    expect(await getGift(gift.id)).toEqual(response.body);
    expect(await storedTribute(gift.id)).toMatchObject({
      tribute_acknowledgement: 'sent',
      tribute_sent_on: '2026-03-20',
    });
    const events = await eventsOf(gift.id);
    expect(events.map((event) => event.type)).toEqual([
      'gift.created',
      'gift.tribute_acknowledged',
    ]);
    expect(events[1]!.data.object).toEqual(response.body);
  });

  test('a dry run, both ways, answers the sent gift and writes nothing', async () => {
    const gift = await pendingGift();
    const before = await snapshot();
    for (const dry of [
      await service.call<TributeGift>('POST', `${ackPath(gift.id)}?dry_run=true`, {
        body: { sent_on: '2026-03-20' },
      }),
      await service.call<TributeGift>('POST', ackPath(gift.id), {
        body: { sent_on: '2026-03-20' },
        headers: { 'Dry-Run': 'true' },
      }),
    ]) {
      expect(dry.status).toBe(200);
      expect(dry.body).toEqual({
        ...gift,
        tribute: { ...gift.tribute, acknowledgement: 'sent', sent_on: '2026-03-20' },
        updated_at: expect.stringMatching(ISO_MS),
      });
    }
    expect(await snapshot()).toEqual(before);
    expect((await getGift(gift.id)).tribute?.acknowledgement).toBe('pending');
  });

  test('an Idempotency-Key replay answers the same; a second acknowledgement is 409', async () => {
    const gift = await pendingGift();
    const call = (sentOn: string) =>
      service.call<TributeGift>('POST', ackPath(gift.id), {
        body: { sent_on: sentOn },
        headers: { 'Idempotency-Key': `ack-${gift.id}` },
      });
    const first = await call('2026-03-20');
    const replay = await call('2026-03-20');
    expect(first.status).toBe(200);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect((await eventsOf(gift.id)).length).toBe(2);
    await expectSameErrorThreeWays(
      service,
      ackPath(gift.id),
      'POST',
      { sent_on: '2026-03-21' },
      { status: 409, code: 'invalid_state_transition' },
      snapshot,
    );
    expect((await getGift(gift.id)).tribute?.sent_on).toBe('2026-03-20');
  });

  test('a tribute without notify, or a gift without a tribute, is 409', async () => {
    const notRequired = await postGift({ tribute: inMemory() });
    const plain = await postGift();
    for (const gift of [notRequired, plain])
      await expectSameErrorThreeWays(
        service,
        ackPath(gift.id),
        'POST',
        { sent_on: '2026-03-20' },
        { status: 409, code: 'invalid_state_transition' },
        snapshot,
      );
  });

  test('an unknown gift, or another institution’s, is 404', async () => {
    for (const id of [ids.otherGift, 999999])
      await expectSameErrorThreeWays(
        service,
        ackPath(id),
        'POST',
        { sent_on: '2026-03-20' },
        { status: 404, code: 'resource_not_found' },
        snapshot,
      );
    // Nor can that institution acknowledge this one's gift.
    const gift = await pendingGift();
    await expectSameErrorThreeWays(
      service,
      ackPath(gift.id),
      'POST',
      { sent_on: '2026-03-20' },
      { status: 404, code: 'resource_not_found' },
      snapshot,
      { key: other.key },
    );
  });

  test.each<Case>([
    ['no sent_on', () => ({}), [{ param: 'sent_on', code: 'required' }]],
    [
      'a bad date',
      () => ({ sent_on: '2026-02-30' }),
      [{ param: 'sent_on', code: 'invalid_format' }],
    ],
    [
      'a date before the gift',
      () => ({ sent_on: '2026-03-14' }),
      [{ param: 'sent_on', code: 'out_of_range' }],
    ],
    [
      'an unknown field',
      () => ({ sent_on: '2026-03-20', acknowledgement: 'sent' }),
      [{ param: 'acknowledgement', code: 'unknown_field' }],
    ],
  ])('%s: 422, and the acknowledgement stays pending', async (_name, body, expected) => {
    const gift = await pendingGift();
    await expectSameFailureThreeWays(service, ackPath(gift.id), 'POST', body, expected, snapshot);
    expect((await getGift(gift.id)).tribute?.acknowledgement).toBe('pending');
  });

  test('a voided gift may still be acknowledged', async () => {
    const gift = await pendingGift();
    const voided = await service.call('POST', `${giftsPath}/${gift.id}/void`, {
      body: { reason: 'Entered twice' },
    });
    expect(voided.status).toBe(200);
    const response = await service.call<TributeGift>('POST', ackPath(gift.id), {
      body: { sent_on: '2026-03-20' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: 'voided',
      tribute: { acknowledgement: 'sent', sent_on: '2026-03-20' },
    });
  });
});

describe('PATCH of a tribute', () => {
  const patch = (id: number, body: Record<string, unknown>) =>
    service.call<TributeGift>('PATCH', `${giftsPath}/${id}`, { body });

  test('adding notify makes not_required pending; removing it makes pending not_required', async () => {
    const gift = await postGift({ tribute: inMemory() });
    const added = await patch(gift.id, { tribute: inMemory({ notify: notifyByEmail }) });
    expect(added.status).toBe(200);
    expect(added.body.tribute).toMatchObject({ acknowledgement: 'pending', sent_on: null });
    const removed = await patch(gift.id, { tribute: inMemory({ message: 'No card' }) });
    expect(removed.body.tribute).toMatchObject({
      notify: null,
      message: 'No card',
      acknowledgement: 'not_required',
    });
    expect(await storedTribute(gift.id)).toMatchObject({
      tribute_acknowledgement: 'not_required',
      tribute_sent_on: null,
    });
  });

  test('a sent acknowledgement stays sent with its date, whatever the tribute becomes', async () => {
    const gift = await postGift({ tribute: inMemory({ notify: notifyByEmail }) });
    await service.call('POST', ackPath(gift.id), { body: { sent_on: '2026-03-20' } });
    const changed = await patch(gift.id, {
      tribute: { type: 'in_honor_of', honoree_name: 'Grace B. Hopper' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.tribute).toEqual({
      type: 'in_honor_of',
      honoree_name: 'Grace B. Hopper',
      honoree_donor_id: null,
      notify: null,
      message: null,
      acknowledgement: 'sent',
      sent_on: '2026-03-20',
    });
    expect(await storedTribute(gift.id)).toMatchObject({
      tribute_acknowledgement: 'sent',
      tribute_sent_on: '2026-03-20',
    });
  });

  test('a PATCH of another field keeps the tribute and its acknowledgement', async () => {
    const gift = await postGift({ tribute: inMemory({ notify: notifyByEmail }) });
    await service.call('POST', ackPath(gift.id), { body: { sent_on: '2026-03-20' } });
    const sent = await getGift(gift.id);
    const response = await patch(gift.id, { subject: 'Renamed' });
    expect(response.status).toBe(200);
    expect(response.body.tribute).toEqual(sent.tribute);
  });

  test('null removes the tribute and its acknowledgement; the event holds the old tribute', async () => {
    const gift = await postGift({ tribute: inMemory({ notify: notifyByEmail }) });
    const response = await patch(gift.id, { tribute: null });
    expect(response.status).toBe(200);
    expect(response.body.tribute).toBeNull();
    expect(await storedTribute(gift.id)).toEqual({
      tribute: null,
      tribute_honoree_donor_id: null,
      tribute_acknowledgement: null,
      tribute_sent_on: null,
    });
    const events = await eventsOf(gift.id);
    expect(events.at(-1)).toEqual({
      type: 'gift.updated',
      data: {
        object: response.body,
        previous_attributes: { tribute: gift.tribute },
      },
    });
  });

  test('a receipted gift’s tribute may change (it is not money)', async () => {
    const gift = await postGift({ tribute: inMemory() });
    const receipt = await service.call('POST', '/api/v1/receipts', { body: { gift_id: gift.id } });
    expect(receipt.status).toBe(201);
    const response = await patch(gift.id, { tribute: inMemory({ notify: notifyByEmail }) });
    expect(response.status).toBe(200);
    expect(response.body.tribute?.acknowledgement).toBe('pending');
  });

  test('naming another institution’s donor as honoree is 422; the same honoree again is fine', async () => {
    const honoree = await createDonor('honoree@example.org');
    const gift = await postGift({ tribute: inMemory({ honoree_donor_id: honoree.id }) });
    await expectSameFailureThreeWays(
      service,
      `${giftsPath}/${gift.id}`,
      'PATCH',
      { tribute: inMemory({ honoree_donor_id: ids.otherDonor }) },
      [{ param: 'tribute.honoree_donor_id', code: 'reference_not_found' }],
      snapshot,
    );
    const same = await patch(gift.id, {
      tribute: inMemory({ honoree_donor_id: honoree.id, message: 'Again' }),
    });
    expect(same.status).toBe(200);
    expect(same.body.tribute?.honoree_donor_id).toBe(honoree.id);
  });

  test('deleting the honoree donor leaves the tribute with its name', async () => {
    const honoree = await createDonor('gone@example.org');
    const gift = await postGift({
      tribute: inMemory({ honoree_donor_id: honoree.id, notify: notifyByEmail }),
    });
    const deleted = await service.call('DELETE', `/api/v1/donors/${honoree.id}`);
    expect(deleted.status).toBe(200);
    const after = await getGift(gift.id);
    expect(after.tribute).toEqual({ ...gift.tribute, honoree_donor_id: null });
    // A later PATCH of another field does not bring the deleted donor back.
    const renamed = await patch(gift.id, { subject: 'Still in memory' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.tribute).toEqual(after.tribute);
  });
});

describe('GET /gifts?tribute_acknowledgement=', () => {
  test('lists the gifts in each state, newest first, page by page', async () => {
    for (const tribute of [
      inMemory({ notify: notifyByEmail }),
      inMemory(),
      inMemory({ notify: notifyByEmail }),
      inMemory({ notify: notifyByEmail }),
    ])
      await postGift({ tribute });
    await postGift();
    const institutionId = service.tenant.institutionId;
    for (const state of ['pending', 'sent', 'not_required'] as const) {
      const expected = await service.db.anyFirst(sql.unsafe`
        SELECT id FROM gifts
        WHERE institution_id = ${institutionId} AND tribute_acknowledgement = ${state}
        ORDER BY id DESC`);
      expect(expected.length).toBeGreaterThan(1);
      const seen: number[] = [];
      let query = `?tribute_acknowledgement=${state}&limit=2`;
      for (;;) {
        const page = await service.call<Page>('GET', `${giftsPath}${query}`);
        expect(page.status).toBe(200);
        for (const gift of page.body.data) {
          expect(gift.tribute?.acknowledgement).toBe(state);
          seen.push(gift.id);
        }
        if (!page.body.has_more) break;
        query = `?tribute_acknowledgement=${state}&limit=2&starting_after=${page.body.next_cursor}`;
      }
      expect(seen).toEqual(expected);
    }
  });

  test('another institution sees none of these; an unknown state is 400', async () => {
    const theirs = await service.call<Page>('GET', `${giftsPath}?tribute_acknowledgement=pending`, {
      key: other.key,
    });
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual([]);
    const bad = await service.call<{ error: { code: string } }>(
      'GET',
      `${giftsPath}?tribute_acknowledgement=done`,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_parameter');
  });
});
