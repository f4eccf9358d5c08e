// An imported gift row may pay a pledge (pledge_id, as POST /gifts): a payment that fulfils the
// pledge commits `pledge.fulfilled` with its `gift.created`, as the single write does; a dry run
// of the same file commits neither.
import { startTestService, type TestService } from './helpers/harness.js';
import { upload, settled } from './helpers/imports.js';
import { created } from './helpers/responses.js';

interface Event {
  id: string;
  type: string;
  request_id: string | null;
  api_key_id: string | null;
  data: { object: Record<string, unknown> };
}

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: '2026-03-15' });
});

afterAll(async () => {
  await service?.close();
});

const post = (path: string, body: Record<string, unknown>) =>
  created<{ id: number }>(service.call('POST', `/api/v1${path}`, { body }));

const eventsOf = async (query: string) => {
  const page = await service.call<{ data: Event[] }>('GET', `/api/v1/events?${query}`);
  expect(page.status).toBe(200);
  return page.body.data;
};

test('an imported payment that brings a pledge to 0 commits pledge.fulfilled with its gift.created', async () => {
  const donor = await post('/donors', {
    role: 'Individual',
    first_name: 'Ada',
    last_name: 'L',
    email: 'ada@example.org',
  });
  const pledge = await post('/pledges', {
    donor_id: donor.id,
    amount: 100,
    pledge_date: '2026-01-10',
    schedule: { frequency: 'monthly', installments: 2, first_due_on: '2026-01-31' },
  });
  // Two payments in one file (one chunk): only the second fulfils the pledge.
  const csv =
    'donor_id,amount,gift_date,subject,pledge_id\n' +
    `${donor.id},40,2026-02-01,First payment,${pledge.id}\n` +
    `${donor.id},60,2026-02-02,Last payment,${pledge.id}\n`;

  const dry = await upload(service, 'resource=gifts&dry_run=true', csv);
  expect(dry.status).toBe(202);
  expect(await settled(service, dry.body.id)).toMatchObject({
    status: 'validated',
    rows_failed: 0,
  });
  expect(await eventsOf('type=pledge.fulfilled')).toEqual([]);

  const real = await upload(service, 'resource=gifts', csv);
  expect(real.status).toBe(202);
  expect(await settled(service, real.body.id)).toMatchObject({
    status: 'completed',
    rows_succeeded: 2,
    rows_failed: 0,
  });

  const fulfilled = await eventsOf('type=pledge.fulfilled');
  expect(fulfilled).toHaveLength(1);
  const asGetReturns = await service.call<Record<string, unknown>>(
    'GET',
    `/api/v1/pledges/${pledge.id}`,
  );
  expect(asGetReturns.body).toMatchObject({ status: 'fulfilled', balance: 0 });
  expect(fulfilled[0]!.data.object.id).toBe(pledge.id);
  expect(fulfilled[0]!.data).toEqual({ object: asGetReturns.body });

  const gifts = (await eventsOf('type=gift.created')).filter(
    (event) => event.data.object.pledge_id === pledge.id,
  );
  expect(gifts.map((event) => event.data.object.amount).sort()).toEqual([40, 60]);
  // The consequence carries the import's request and key, as its gift's event does.
  expect(fulfilled[0]!.request_id).toBe(gifts[0]!.request_id);
  expect(fulfilled[0]!.api_key_id).toBe(gifts[0]!.api_key_id);
});
