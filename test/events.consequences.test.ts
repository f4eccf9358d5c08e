// The event types of integration.md §1 that are not a write's plain created/updated/deleted:
// `award_cycle.status_changed` (an update of `status`) and `pledge.fulfilled` (a consequence of
// a gift payment), each in the events list and delivered by webhook.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startTestService, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import { waitFor } from './helpers/wait.js';

interface Event {
  id: string;
  type: string;
  request_id: string | null;
  api_key_id: string | null;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

let service: TestService;
let receiver: Server;
const received: { headers: Record<string, string>; body: string }[] = [];
let secret = '';

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        headers: Object.fromEntries(
          ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [
            name,
            String(request.headers[name]),
          ]),
        ),
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  service = await startTestService({
    CLOCK_TODAY: '2026-03-15',
    WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${port}`,
  });
  const endpoint = await created<{ secret: string }>(
    service.call('POST', '/api/v1/webhook-endpoints', {
      body: {
        url: `http://127.0.0.1:${port}/hook`,
        enabled_events: ['award_cycle.status_changed', 'pledge.fulfilled'],
      },
    }),
  );
  secret = endpoint.secret;
});

afterAll(async () => {
  await service?.close();
  await new Promise((resolve) => receiver.close(resolve));
});

const post = (path: string, body: Record<string, unknown>) =>
  created<{ id: number }>(service.call('POST', `/api/v1${path}`, { body }));

const eventsOf = async (query: string) => {
  const page = await service.call<{ data: Event[] }>('GET', `/api/v1/events?${query}`);
  expect(page.status).toBe(200);
  return page.body.data;
};

/** The verified webhook of this event, once it has arrived. */
async function delivered(eventId: string): Promise<Event> {
  const webhook = new Webhook(secret);
  const find = () => received.find((delivery) => delivery.headers['webhook-id'] === eventId);
  await waitFor(() => find() !== undefined, 10_000, `the webhook of ${eventId}`);
  const delivery = find()!;
  return webhook.verify(delivery.body, delivery.headers) as Event;
}

test('an award cycle PATCH that changes status is award_cycle.status_changed; any other is updated', async () => {
  const cycle = await post('/award-cycles', {
    name: 'Scholarships 2027',
    starts_on: '2026-09-01',
    ends_on: '2027-06-30',
  });
  const opened = await service.call<Record<string, unknown>>(
    'PATCH',
    `/api/v1/award-cycles/${cycle.id}`,
    { body: { status: 'open', name: 'Scholarships 2026/27' } },
  );
  expect(opened.status).toBe(200);
  const renamed = await service.call('PATCH', `/api/v1/award-cycles/${cycle.id}`, {
    body: { name: 'Scholarships 2026-27' },
  });
  expect(renamed.status).toBe(200);
  // A status sent unchanged changes nothing of it: a plain update.
  await service.call('PATCH', `/api/v1/award-cycles/${cycle.id}`, {
    body: { status: 'open', ends_on: '2027-07-31' },
  });

  const history = await eventsOf(`object_type=award_cycle&object_id=${cycle.id}`);
  expect(history.map((event) => event.type)).toEqual([
    'award_cycle.updated',
    'award_cycle.updated',
    'award_cycle.status_changed',
    'award_cycle.created',
  ]);
  const changed = history[2]!;
  expect(changed.request_id).toBe(opened.headers.get('request-id'));
  expect(changed.api_key_id).toBe(service.tenant.apiKeyId);
  expect(changed.data).toEqual({
    object: opened.body,
    previous_attributes: { name: 'Scholarships 2027', status: 'draft' },
  });
  expect(await eventsOf('type=award_cycle.status_changed')).toEqual([changed]);
  expect(await delivered(changed.id)).toEqual(changed);
});

test('a payment that brings a pledge to 0 commits pledge.fulfilled with the gift.created of its request', async () => {
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
  const pay = (amount: number, key: string) =>
    service.call<{ id: number }>('POST', '/api/v1/gifts', {
      body: {
        donor_id: donor.id,
        amount,
        gift_date: '2026-02-01',
        subject: 'Pledge payment',
        pledge_id: pledge.id,
      },
      headers: { 'Idempotency-Key': key },
    });
  expect((await pay(40, 'first-payment')).status).toBe(201);
  expect(await eventsOf('type=pledge.fulfilled')).toEqual([]);

  // A dry run of the last payment makes no event.
  const dry = await service.call('POST', '/api/v1/gifts?dry_run=true', {
    body: {
      donor_id: donor.id,
      amount: 60,
      gift_date: '2026-02-01',
      subject: 'Pledge payment',
      pledge_id: pledge.id,
    },
  });
  expect(dry.status).toBe(201);
  expect(await eventsOf('type=pledge.fulfilled')).toEqual([]);

  const last = await pay(60, 'last-payment');
  expect(last.status).toBe(201);
  // A replay makes none either.
  expect((await pay(60, 'last-payment')).headers.get('idempotent-replayed')).toBe('true');

  const fulfilled = await eventsOf('type=pledge.fulfilled');
  expect(fulfilled).toHaveLength(1);
  const [event] = fulfilled;
  const giftCreated = (await eventsOf(`object_type=gift&object_id=${last.body.id}`))[0]!;
  expect(giftCreated.type).toBe('gift.created');
  expect(event!.request_id).toBe(last.headers.get('request-id'));
  expect(event!.request_id).toBe(giftCreated.request_id);
  expect(event!.api_key_id).toBe(giftCreated.api_key_id);
  const asGetReturns = await service.call<Record<string, unknown>>(
    'GET',
    `/api/v1/pledges/${pledge.id}`,
  );
  expect(asGetReturns.body).toMatchObject({ status: 'fulfilled', balance: 0 });
  expect(event!.data).toEqual({ object: asGetReturns.body });
  expect(await delivered(event!.id)).toEqual(event);
});
