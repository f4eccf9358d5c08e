// A subject access request (constituents.md §6): GET /donors/{id}/export answers every stored
// fact about the donor as one document; another institution's donor is as absent as a missing
// one; after an erasure the export shows what erasure kept.
import { randomUUID } from 'node:crypto';
import { type Body, type Donor, other, service, setUpDonorTests } from './helpers/donors.js';
import { created } from './helpers/responses.js';
import { withoutRequestId } from './helpers/threeWays.js';

setUpDonorTests();

interface Export {
  object: string;
  donor_id: number;
  donor: Donor & { giving: { total_amount: number } };
  merged_donors: Donor[];
  relationships: { id: number; note: string | null }[];
  consents: { id: number; statement: string | null }[];
  gifts: { id: number }[];
  soft_credits: { id: number }[];
  tributes: { id: number }[];
  pledges: { id: number }[];
  recurring_gifts: { id: number }[];
  receipts: { id: number; donor_name: string }[];
  events: { type: string; data: { object: { id: number } } }[];
  [key: string]: unknown;
}

const post = <T = { id: number }>(path: string, body: Body, key?: string) =>
  created<T & { id: number }>(
    service.call('POST', `/api/v1${path}`, {
      body,
      key,
      headers: { 'Idempotency-Key': randomUUID() },
    }),
  );

const exportOf = (id: number, key?: string) =>
  service.call<Export>('GET', `/api/v1/donors/${id}/export`, { key });

test('answers the donor and every record naming it, with their events; another institution’s donor is a 404', async () => {
  const fund = (await post('/funds', { name: 'General', code: 'GEN' })).id;
  const person = (
    await post('/donors', {
      role: 'Individual',
      first_name: 'Ada',
      last_name: 'Export',
      email: 'ada.export@example.org',
      phones: [{ number: '555 0101', type: 'mobile' }],
    })
  ).id;
  const earlier = (
    await post('/donors', {
      role: 'Individual',
      first_name: 'Ada',
      last_name: 'Old',
      email: 'a@x.org',
    })
  ).id;
  expect(
    (await service.call('POST', `/api/v1/donors/${person}/merge`, { body: { source_id: earlier } }))
      .status,
  ).toBe(200);
  const friend = (
    await post('/donors', {
      role: 'Individual',
      first_name: 'Fred',
      last_name: 'Friend',
      email: 'f@x.org',
    })
  ).id;
  const giftBody = (donorId: number, extra: Body = {}) => ({
    donor_id: donorId,
    amount: 20,
    subject: 'Annual fund',
    gift_date: '2026-05-01',
    fund_id: fund,
    ...extra,
  });
  const own = await post('/gifts', giftBody(person));
  const receipt = await post('/receipts', { gift_id: own.id });
  const credit = await post(
    '/gifts',
    giftBody(friend, { soft_credits: [{ donor_id: person, amount: 20, reason: 'household' }] }),
  );
  const honor = await post(
    '/gifts',
    giftBody(friend, {
      tribute: { type: 'in_honor_of', honoree_name: 'Ada Export', honoree_donor_id: person },
    }),
  );
  const pledge = await post('/pledges', {
    donor_id: person,
    amount: 40,
    pledge_date: '2026-01-01',
    fund_id: fund,
    schedule: { frequency: 'one_time', installments: 1, first_due_on: '2026-02-01' },
  });
  const recurring = await post('/recurring-gifts', {
    donor_id: person,
    amount: 10,
    frequency: 'monthly',
    start_on: '2026-01-01',
    fund_id: fund,
  });
  const relationship = await post('/relationships', {
    donor_id: friend,
    related_donor_id: person,
    type: 'sibling_of',
    note: 'Met at the gala',
  });
  const consent = await post(`/donors/${person}/consents`, {
    channel: 'email',
    response: 'opt_in',
    source: 'web_form',
    statement: 'Yes, newsletters please',
  });
  const unrelated = await post('/gifts', giftBody(friend));

  const answer = await exportOf(person);
  expect(answer.status).toBe(200);
  const body = answer.body;
  const donor = (await service.call('GET', `/api/v1/donors/${person}`)).body;
  expect(body).toMatchObject({ object: 'donor_export', donor_id: person, donor });
  const ids = (rows: { id: number }[]) => rows.map((row) => row.id);
  expect(ids(body.merged_donors)).toEqual([earlier]);
  expect(ids(body.gifts)).toEqual([own.id]);
  expect(ids(body.soft_credits)).toEqual([credit.id]);
  expect(ids(body.tributes)).toEqual([honor.id]);
  expect(ids(body.pledges)).toEqual([pledge.id]);
  expect(ids(body.recurring_gifts)).toEqual([recurring.id]);
  expect(ids(body.receipts)).toEqual([receipt.id]);
  expect(ids(body.relationships)).toEqual([relationship.id]);
  expect(ids(body.consents)).toEqual([consent.id]);
  const events = body.events.map((event) => `${event.type}:${event.data.object.id}`);
  for (const expected of [
    `donor.created:${person}`,
    `donor.created:${earlier}`,
    `donor.merged:${person}`,
    `gift.created:${own.id}`,
    `gift.created:${credit.id}`,
    `gift.created:${honor.id}`,
    `receipt.issued:${receipt.id}`,
    `pledge.created:${pledge.id}`,
    `recurring_gift.created:${recurring.id}`,
    `relationship.created:${relationship.id}`,
    `consent.created:${consent.id}`,
  ])
    expect(events).toContain(expected);
  expect(events).not.toContain(`gift.created:${unrelated.id}`);
  expect(events).not.toContain(`donor.created:${friend}`);

  // Another institution's donor answers exactly as a missing one.
  const foreign = (
    await post(
      '/donors',
      { role: 'Individual', first_name: 'X', last_name: 'Y', email: 'xy@o.org' },
      other.key,
    )
  ).id;
  const theirs = await exportOf(foreign);
  const missing = await exportOf(999999999);
  expect(theirs.status).toBe(404);
  expect(withoutRequestId(theirs)).toEqual(withoutRequestId(missing));
  expect((await exportOf(foreign, other.key)).status).toBe(200);
});

test('after an erasure, the export holds nothing personal but the receipts’ frozen name', async () => {
  const person = (
    await post('/donors', {
      role: 'Individual',
      first_name: 'Ernestine',
      last_name: 'Gone',
      email: 'ernestine.gone@example.org',
      phone: '555 0199',
    })
  ).id;
  const own = await post('/gifts', {
    donor_id: person,
    amount: 15,
    subject: 'Annual fund',
    gift_date: '2026-05-01',
  });
  await post('/receipts', { gift_id: own.id });
  const erased = await service.call('POST', `/api/v1/donors/${person}/erase`, {
    body: { reason: 'Request 7' },
    headers: { 'Idempotency-Key': randomUUID() },
  });
  expect(erased.status).toBe(200);

  const answer = await exportOf(person);
  expect(answer.status).toBe(200);
  expect(answer.body.donor).toMatchObject({ status: 'erased', first_name: 'Erased', email: null });
  expect(answer.body.receipts[0]!.donor_name).toContain('Ernestine');
  const { receipts: _kept, ...rest } = answer.body;
  const text = JSON.stringify(rest).toLowerCase();
  for (const personal of ['ernestine', 'gone@', '555 0199']) expect(text).not.toContain(personal);
  expect(answer.body.events.map((event) => event.type)).toContain('donor.erased');
});
