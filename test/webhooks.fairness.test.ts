// Webhook deliveries are fair across institutions: one institution whose receiver never answers
// cannot hold up another's deliveries (README, "Webhooks" under operating notes).
import { sql } from 'slonik';
import { z } from 'zod';
import { WebhookReceiver } from './faults/webhookReceiver.js';
import { startTestService, type TestService, type Tenant } from './helpers/harness.js';
import { waitFor } from './helpers/wait.js';

const A_DONORS = 60;

let service: TestService;
let other: Tenant;
const hanging = new WebhookReceiver();
const answering = new WebhookReceiver();

beforeAll(async () => {
  await hanging.start();
  await answering.start();
  hanging.answer = 'hang';
  // The default timeout (10 s): each of A's attempts holds its send that long.
  service = await startTestService({
    WEBHOOK_ALLOWED_HOSTS: `${hanging.host},${answering.host}`,
  });
  other = await service.createTenant('Other College', 'USD');
  // Two worker processes' worth of delivery slots (80): the limit holds across them.
  await service.startWorker();
});

afterAll(async () => {
  await service?.close();
  await hanging.stop();
  await answering.stop();
});

const createEndpoint = async (url: string, key: string) => {
  const created = await service.call<{ id: number; secret: string }>(
    'POST',
    '/api/v1/webhook-endpoints',
    { key, body: { url, enabled_events: ['donor.created'] } },
  );
  expect(created.status).toBe(201);
  return created.body;
};

const createDonor = async (key: string, index: number) => {
  const created = await service.call<{ id: number }>('POST', '/api/v1/donors', {
    key,
    body: { role: 'Individual', first_name: 'Ada', last_name: `Lovelace ${index}` },
    headers: { 'Idempotency-Key': `donor-${key}-${index}` },
  });
  expect(created.status).toBe(201);
  return created.body.id;
};

const deliveriesOf = (endpointId: number) =>
  service.db.anyFirst(sql.type(z.object({ status: z.string() }))`
    SELECT status FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`);

test("one institution's hanging receiver does not hold up another's delivery", async () => {
  await createEndpoint(hanging.url, service.tenant.key);
  const endpointB = await createEndpoint(answering.url, other.key);

  // A writes 60 donors; its receiver takes every request and never answers.
  await Promise.all(
    Array.from({ length: A_DONORS }, (_, index) => createDonor(service.tenant.key, index)),
  );
  // The most of A's requests held at once, sampled throughout.
  let mostHanging = 0;
  const sampler = setInterval(() => (mostHanging = Math.max(mostHanging, hanging.hanging)), 10);
  await waitFor(() => hanging.hanging > 0, 10_000, "A's receiver to hold a request");

  const written = Date.now();
  const donorB = await createDonor(other.key, 0);
  await waitFor(() => answering.received.length > 0, 40_000, "B's delivery");
  const seconds = (Date.now() - written) / 1000;
  console.log(`B's delivery arrived ${seconds.toFixed(1)} s after its write`);

  expect(seconds).toBeLessThan(8);
  // A keeps its share of the sends, no more (WEBHOOK_INSTITUTION_SENDS, its default).
  const share = service.config.WEBHOOK_INSTITUTION_SENDS;
  await waitFor(() => hanging.hanging === share, 5_000, "A's share of the sends");
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  clearInterval(sampler);
  expect(mostHanging).toBe(share);
  await waitFor(
    async () => (await deliveriesOf(endpointB.id)).every((status) => status === 'delivered'),
    5_000,
    "B's delivery recorded",
  );
  expect(await deliveriesOf(endpointB.id)).toEqual(['delivered']);
  // Signed with B's secret, for B's donor.
  expect(answering.verified(endpointB.secret)).toMatchObject([
    { type: 'donor.created', data: { object: { id: donorB } } },
  ]);
}, 90_000);
