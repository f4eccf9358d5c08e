// Donor flags (constituents.md §3): deceased_on, communication_restrictions, and a donor becoming
// deceased pausing its active recurring gifts with one recurring_gift.updated event each.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { create, service, setUpDonorTests, withKey, type Donor } from './helpers/donors.js';
import { rowErrors, settled, upload } from './helpers/imports.js';
import { holdReceiptKey } from './helpers/rowLock.js';
import { waitFor } from './helpers/wait.js';
import { expectSameFailureThreeWays } from './helpers/threeWays.js';

setUpDonorTests();

interface Flagged extends Donor {
  deceased_on: string | null;
  communication_restrictions: string[];
}

const person = (extra: Record<string, unknown> = {}) =>
  create({
    role: 'Individual',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `ada.${randomUUID()}@example.org`,
    ...extra,
  }) as Promise<Flagged>;

const patch = (id: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  service.call<Flagged>('PATCH', `/api/v1/donors/${id}`, { body, headers });

const flagsOf = (id: number) =>
  service.db.one(sql.unsafe`
    SELECT status, deceased_on::text, communication_restrictions FROM donors WHERE id = ${id}`);

/** Every donor's and recurring gift's stored state, and the events: what a refusal leaves. */
const everything = async () => ({
  donors: await service.db.any(sql.unsafe`
    SELECT id, status, deceased_on::text, communication_restrictions, updated_at FROM donors
    ORDER BY id`),
  recurring: await service.db.any(sql.unsafe`
    SELECT id, status, updated_at FROM recurring_gifts ORDER BY id`),
  events: await service.count('events'),
});

const recurringGift = async (donorId: number, status = 'active') => {
  const response = await service.call<{ id: number; status: string }>(
    'POST',
    '/api/v1/recurring-gifts',
    {
      body: { donor_id: donorId, amount: 25, frequency: 'monthly', start_on: '2026-03-01', status },
      headers: withKey(),
    },
  );
  expect(response.status).toBe(201);
  return response.body.id;
};

const eventTypes = (objectType: string, id: number) =>
  service.db.anyFirst(sql.unsafe`
    SELECT type FROM events WHERE object_type = ${objectType} AND object_id = ${id} ORDER BY seq`);

describe('deceased_on', () => {
  test('is stored with status deceased and answered by GET', async () => {
    const donor = await person({ status: 'deceased', deceased_on: '2026-01-15' });
    expect(donor.deceased_on).toBe('2026-01-15');
    expect(await flagsOf(donor.id)).toMatchObject({ deceased_on: '2026-01-15' });
    const read = await service.call<Flagged>('GET', `/api/v1/donors/${donor.id}`);
    expect(read.body.deceased_on).toBe('2026-01-15');
  });

  test('defaults to null', async () => {
    const donor = await person();
    expect(donor.deceased_on).toBeNull();
    expect(donor.communication_restrictions).toEqual([]);
  });

  test('without status deceased is not_allowed, three ways, on create and update', async () => {
    await expectSameFailureThreeWays(
      service,
      '/api/v1/donors',
      'POST',
      () => ({
        role: 'Individual',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: `ada.${randomUUID()}@example.org`,
        deceased_on: '2026-01-15',
      }),
      [{ param: 'deceased_on', code: 'not_allowed' }],
      everything,
    );
    const donor = await person();
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${donor.id}`,
      'PATCH',
      { deceased_on: '2026-01-15' },
      [{ param: 'deceased_on', code: 'not_allowed' }],
      everything,
    );
  });

  test('an invalid date is invalid_format, three ways', async () => {
    const donor = await person({ status: 'deceased' });
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${donor.id}`,
      'PATCH',
      { deceased_on: '2026-02-30' },
      [{ param: 'deceased_on', code: 'invalid_format' }],
      everything,
    );
  });

  test('a PATCH moving the donor away from deceased clears it', async () => {
    const donor = await person({ status: 'deceased', deceased_on: '2026-01-15' });
    const moved = await patch(donor.id, { status: 'active' });
    expect(moved.status).toBe(200);
    expect(moved.body.deceased_on).toBeNull();
    expect(await flagsOf(donor.id)).toMatchObject({ status: 'active', deceased_on: null });
  });
});

describe('communication_restrictions', () => {
  test('are stored once each in one canonical order, whatever order was sent', async () => {
    const donor = await person({ communication_restrictions: ['no_data_sharing', 'do_not_mail'] });
    expect(donor.communication_restrictions).toEqual(['do_not_mail', 'no_data_sharing']);
    const updated = await patch(donor.id, {
      communication_restrictions: ['do_not_sms', 'do_not_solicit', 'do_not_email'],
    });
    expect(updated.status).toBe(200);
    expect(updated.body.communication_restrictions).toEqual([
      'do_not_solicit',
      'do_not_email',
      'do_not_sms',
    ]);
    expect(await flagsOf(donor.id)).toMatchObject({
      communication_restrictions: ['do_not_solicit', 'do_not_email', 'do_not_sms'],
    });
  });

  test('a dry run answers the canonical order the real write stores', async () => {
    const donor = await person();
    const body = { communication_restrictions: ['do_not_call', 'do_not_solicit'] };
    const dry = await patch(donor.id, body, { 'Dry-Run': 'true' });
    const real = await patch(donor.id, body);
    expect(dry.status).toBe(200);
    expect(dry.body.communication_restrictions).toEqual(real.body.communication_restrictions);
  });

  test('a repeat is invalid_value at its index, an unknown value invalid_value, three ways', async () => {
    const donor = await person();
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${donor.id}`,
      'PATCH',
      { communication_restrictions: ['do_not_mail', 'do_not_call', 'do_not_mail'] },
      [{ param: 'communication_restrictions.2', code: 'invalid_value' }],
      everything,
    );
    await expectSameFailureThreeWays(
      service,
      `/api/v1/donors/${donor.id}`,
      'PATCH',
      { communication_restrictions: ['do_not_fax'] },
      [{ param: 'communication_restrictions.0', code: 'invalid_value' }],
      everything,
    );
  });
});

describe('a donor becoming deceased', () => {
  test('pauses its active recurring gifts with one recurring_gift.updated each, in the same write', async () => {
    const donor = await person();
    const active = [await recurringGift(donor.id), await recurringGift(donor.id)];
    const paused = await recurringGift(donor.id, 'paused');
    const cancelled = await recurringGift(donor.id);
    expect(
      (
        await service.call('PATCH', `/api/v1/recurring-gifts/${cancelled}`, {
          body: { status: 'cancelled' },
        })
      ).status,
    ).toBe(200);
    const eventsBefore = await service.count('events');

    const response = await patch(donor.id, { status: 'deceased', deceased_on: '2026-02-01' });
    expect(response.status).toBe(200);
    expect(response.body.status).toBe('deceased');

    const statuses = await service.db.any(sql.unsafe`
      SELECT id, status FROM recurring_gifts WHERE donor_id = ${donor.id} ORDER BY id`);
    expect(statuses).toEqual([
      { id: active[0], status: 'paused' },
      { id: active[1], status: 'paused' },
      { id: paused, status: 'paused' },
      { id: cancelled, status: 'cancelled' },
    ]);
    for (const id of active) {
      const read = await service.call<{ status: string }>('GET', `/api/v1/recurring-gifts/${id}`);
      expect(read.body.status).toBe('paused');
      expect(await eventTypes('recurring_gift', id)).toEqual([
        'recurring_gift.created',
        'recurring_gift.updated',
      ]);
    }
    expect(await eventTypes('recurring_gift', paused)).toEqual(['recurring_gift.created']);
    expect(await service.count('events')).toBe(eventsBefore + 3);
    expect((await eventTypes('donor', donor.id)).at(-1)).toBe('donor.updated');

    // Already deceased: a further PATCH pauses nothing new (a gift resumed meanwhile stays active).
    expect(
      (
        await service.call('PATCH', `/api/v1/recurring-gifts/${active[0]}`, {
          body: { status: 'active' },
        })
      ).status,
    ).toBe(200);
    const eventsNow = await service.count('events');
    expect((await patch(donor.id, { deceased_on: '2026-02-02' })).status).toBe(200);
    expect(await service.count('events')).toBe(eventsNow + 1);
    expect(await flagsOf(donor.id)).toMatchObject({ deceased_on: '2026-02-02' });
  });

  test('a dry run answers the real body and pauses nothing', async () => {
    const donor = await person();
    const gift = await recurringGift(donor.id);
    const before = await everything();
    const body = { status: 'deceased', deceased_on: '2026-02-01' };
    const dry = await patch(donor.id, body, { 'Dry-Run': 'true' });
    expect(dry.status).toBe(200);
    expect(await everything()).toEqual(before);
    const real = await patch(donor.id, body);
    const { updated_at: dryAt, ...dryBody } = dry.body;
    const { updated_at: realAt, ...realBody } = real.body;
    expect(typeof dryAt).toBe(typeof realAt);
    expect(dryBody).toEqual(realBody);
    expect(
      await service.db.oneFirst(sql.unsafe`SELECT status FROM recurring_gifts WHERE id = ${gift}`),
    ).toBe('paused');
  });

  test('an Idempotency-Key replay pauses once and answers the same body', async () => {
    const donor = await person();
    const gift = await recurringGift(donor.id);
    const headers = { 'Idempotency-Key': randomUUID() };
    const body = { status: 'deceased' };
    const first = await patch(donor.id, body, headers);
    const eventsAfter = await service.count('events');
    const replay = await patch(donor.id, body, headers);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(await service.count('events')).toBe(eventsAfter);
    expect(await eventTypes('recurring_gift', gift)).toEqual([
      'recurring_gift.created',
      'recurring_gift.updated',
    ]);
  });
});

/** Statements of this file's database waiting for a lock. */
const lockWaits = () =>
  service.db.oneFirst(sql.unsafe`
    SELECT count(*)::int FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`);

describe('a recurring gift created while its donor becomes deceased', () => {
  const startGift = (donorId: number, headers: Record<string, string>) =>
    service.call('POST', '/api/v1/recurring-gifts', {
      body: { donor_id: donorId, amount: 25, frequency: 'monthly', start_on: '2026-03-01' },
      headers,
    });

  test('the create waits for the PATCH and is refused: no active gift for a deceased donor', async () => {
    const donor = await person();
    const key = `deceased-${randomUUID()}`;
    const hold = await holdReceiptKey(service.db, service.tenant.institutionId, key);
    const death = patch(donor.id, { status: 'deceased' }, { 'Idempotency-Key': key });
    await waitFor(async () => (await lockWaits()) === 1, 10_000, 'the PATCH held');
    const gift = startGift(donor.id, withKey());
    await waitFor(async () => (await lockWaits()) === 2, 10_000, 'the create waiting');
    await hold.release();
    const [died, started] = await Promise.all([death, gift]);
    expect(died.status).toBe(200);
    expect(started.status).toBe(422);
    expect(started.body).toMatchObject({
      error: { errors: [{ param: 'donor_id', code: 'reference_inactive' }] },
    });
    expect(
      await service.db.anyFirst(
        sql.unsafe`SELECT status FROM recurring_gifts WHERE donor_id = ${donor.id}`,
      ),
    ).toEqual([]);
  });

  test('a create that commits first is paused by the PATCH that waited for it', async () => {
    const donor = await person();
    const key = `started-${randomUUID()}`;
    const hold = await holdReceiptKey(service.db, service.tenant.institutionId, key);
    const gift = startGift(donor.id, { 'Idempotency-Key': key });
    await waitFor(async () => (await lockWaits()) === 1, 10_000, 'the create held');
    const death = patch(donor.id, { status: 'deceased' });
    await waitFor(async () => (await lockWaits()) === 2, 10_000, 'the PATCH waiting');
    await hold.release();
    const [started, died] = await Promise.all([gift, death]);
    expect([started.status, died.status]).toEqual([201, 200]);
    expect(
      await service.db.anyFirst(
        sql.unsafe`SELECT status FROM recurring_gifts WHERE donor_id = ${donor.id}`,
      ),
    ).toEqual(['paused']);
  });

  test('a recurring gift for a donor already deceased is refused, three ways', async () => {
    const donor = await person({ status: 'deceased' });
    await expectSameFailureThreeWays(
      service,
      '/api/v1/recurring-gifts',
      'POST',
      { donor_id: donor.id, amount: 25, frequency: 'monthly', start_on: '2026-03-01' },
      [{ param: 'donor_id', code: 'reference_inactive' }],
      everything,
      { headers: () => withKey() },
    );
  });
});

describe('imports', () => {
  test('communication_restrictions is a `;`-separated cell, judged as the single write judges it', async () => {
    const tag = `imp${randomUUID().slice(0, 8)}`;
    const csv = [
      'role,first_name,last_name,email,status,deceased_on,communication_restrictions',
      `Individual,Ann,Flagged,${tag}a@example.org,deceased,2026-01-15,no_data_sharing; do_not_mail`,
      `Individual,Bob,Twice,${tag}b@example.org,,,do_not_mail;do_not_mail`,
      `Individual,Cy,Alive,${tag}c@example.org,active,2026-01-15,`,
    ].join('\n');
    const answer = await upload(service, 'resource=donors', csv);
    expect(answer.status).toBe(202);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 1,
      rows_failed: 2,
    });
    expect(
      (await rowErrors(service, answer.body.id)).map((row) =>
        row.errors.map(({ param, code }) => ({ row: row.row, param, code })),
      ),
    ).toEqual([
      [{ row: 3, param: 'communication_restrictions.1', code: 'invalid_value' }],
      [{ row: 4, param: 'deceased_on', code: 'not_allowed' }],
    ]);
    expect(
      await service.db.one(sql.unsafe`
        SELECT status, deceased_on::text, communication_restrictions FROM donors
        WHERE email = ${`${tag}a@example.org`}`),
    ).toEqual({
      status: 'deceased',
      deceased_on: '2026-01-15',
      communication_restrictions: ['do_not_mail', 'no_data_sharing'],
    });
  });
});
