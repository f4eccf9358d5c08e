// Webhooks (integration.md §2): endpoints, signed deliveries, retries and the SSRF rules.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { startTestService, type TestService } from './helpers/harness.js';
import { waitFor } from './helpers/wait.js';

interface Endpoint {
  id: number;
  object: 'webhook_endpoint';
  url: string;
  enabled_events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  secret?: string;
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on loopback that answers each request with the next status of `answers`. */
class Receiver {
  readonly received: Received[] = [];
  private server: Server | null = null;
  port = 0;
  constructor(public answers: number[] = []) {}

  async start(port = 0): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.received.push({
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        response.writeHead(this.answers.shift() ?? 200).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  get url() {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Each delivery verified with the Standard Webhooks library; its event parsed. */
  verified(secret: string): { id: string; type: string; data: { object: { id: number } } }[] {
    const webhook = new Webhook(secret);
    return this.received.map(
      (delivery) =>
        webhook.verify(delivery.body, {
          'webhook-id': String(delivery.headers['webhook-id']),
          'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
          'webhook-signature': String(delivery.headers['webhook-signature']),
        }) as { id: string; type: string; data: { object: { id: number } } },
    );
  }
}

let service: TestService;
const receivers: Receiver[] = [];
/** A port reserved for the receiver that is down at first: it is allowed before it listens. */
let latePort = 0;

async function freePort(): Promise<number> {
  const probe = await new Receiver().start();
  const port = probe.port;
  await probe.stop();
  return port;
}

beforeAll(async () => {
  for (let index = 0; index < 5; index++) receivers.push(await new Receiver().start());
  latePort = await freePort();
  service = await startTestService({
    WEBHOOK_ALLOWED_HOSTS: [
      ...receivers.map((r) => `127.0.0.1:${r.port}`),
      `127.0.0.1:${latePort}`,
    ].join(','),
    WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2',
  });
});

afterAll(async () => {
  await service?.close();
  await Promise.all(receivers.map((receiver) => receiver.stop()));
});

const createEndpoint = (body: Record<string, unknown>, key?: string) =>
  service.call<Endpoint>('POST', '/api/v1/webhook-endpoints', { body, ...(key ? { key } : {}) });

const endpointCount = () => service.count('webhook_endpoints');

describe('webhook endpoints', () => {
  test('create answers the secret once; GET never shows it', async () => {
    const answer = await createEndpoint({
      url: receivers[0]!.url,
      enabled_events: ['gift.*'],
      description: 'Finance',
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('location')).toBe(`/api/v1/webhook-endpoints/${answer.body.id}`);
    expect(answer.body).toMatchObject({
      object: 'webhook_endpoint',
      url: receivers[0]!.url,
      enabled_events: ['gift.*'],
      description: 'Finance',
      status: 'enabled',
    });
    expect(answer.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(answer.body.secret!.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);

    const one = await service.call<Endpoint>('GET', `/api/v1/webhook-endpoints/${answer.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty('secret');
    const list = await service.call<{ data: Endpoint[] }>('GET', '/api/v1/webhook-endpoints');
    expect(list.status).toBe(200);
    expect(list.body.data.map((endpoint) => endpoint.id)).toContain(answer.body.id);
    expect(list.body.data.every((endpoint) => !('secret' in endpoint))).toBe(true);
    // Its event carries the endpoint without the secret.
    const event = await service.db.oneFirst(sql.type(z.object({ data: z.json() }))`
      SELECT data FROM events WHERE type = 'webhook_endpoint.created'
        AND object_id = ${answer.body.id}`);
    expect(JSON.stringify(event)).not.toContain(answer.body.secret!);

    const patched = await service.call<Endpoint>(
      'PATCH',
      `/api/v1/webhook-endpoints/${answer.body.id}`,
      { body: { status: 'disabled', description: null } },
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ status: 'disabled', description: null });
    expect(patched.body).not.toHaveProperty('secret');

    const gone = await service.call('DELETE', `/api/v1/webhook-endpoints/${answer.body.id}`);
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual({ id: answer.body.id, object: 'webhook_endpoint', deleted: true });
    expect((await service.call('GET', `/api/v1/webhook-endpoints/${answer.body.id}`)).status).toBe(
      404,
    );
  });

  test.each([
    ['https://127.0.0.1/', 'url'],
    ['https://169.254.169.254/latest/meta-data', 'url'],
    ['https://10.1.2.3/', 'url'],
    ['https://[::1]/', 'url'],
    ['https://[::ffff:127.0.0.1]/', 'url'],
    ['http://hooks.example.org/', 'url'],
    ['ftp://hooks.example.org/', 'url'],
    ['not a url', 'url'],
  ])('refuses %s (422 invalid_value, nothing stored)', async (url, param) => {
    const before = await endpointCount();
    const answer = await createEndpoint({ url, enabled_events: ['*'] });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      error: { code: 'validation_failed', errors: [{ param, code: 'invalid_value' }] },
    });
    expect(await endpointCount()).toBe(before);
  });

  test('refuses unknown event types and a missing url', async () => {
    const before = await endpointCount();
    const answer = await createEndpoint({
      enabled_events: ['gift.created', 'gift.exploded', 'nothing.*'],
    });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      error: {
        code: 'validation_failed',
        errors: expect.arrayContaining([
          expect.objectContaining({ param: 'enabled_events.1', code: 'invalid_value' }),
          expect.objectContaining({ param: 'enabled_events.2', code: 'invalid_value' }),
          expect.objectContaining({ param: 'url', code: 'required' }),
        ]),
      },
    });
    expect(await endpointCount()).toBe(before);
  });

  test('another institution’s endpoint is as missing as none', async () => {
    const other = await service.createTenant('Other College', 'USD');
    const mine = await createEndpoint({ url: receivers[0]!.url, enabled_events: ['*'] });
    for (const [method, path] of [
      ['GET', `/api/v1/webhook-endpoints/${mine.body.id}`],
      ['PATCH', `/api/v1/webhook-endpoints/${mine.body.id}`],
      ['DELETE', `/api/v1/webhook-endpoints/${mine.body.id}`],
      ['POST', `/api/v1/webhook-endpoints/${mine.body.id}/rotate-secret`],
    ] as const) {
      const theirs = await service.call(method, path, {
        key: other.key,
        ...(method === 'PATCH' || method === 'POST' ? { body: {} } : {}),
      });
      const missing = await service.call(method, path.replace(String(mine.body.id), '999999'), {
        key: other.key,
        ...(method === 'PATCH' || method === 'POST' ? { body: {} } : {}),
      });
      expect(theirs.status).toBe(404);
      const { request_id: _theirs, ...theirError } = (theirs.body as { error: object }).error as {
        request_id: string;
      };
      const { request_id: _missing, ...missingError } = (missing.body as { error: object })
        .error as { request_id: string };
      expect(theirError).toEqual(missingError);
    }
    await service.call('DELETE', `/api/v1/webhook-endpoints/${mine.body.id}`);
  });
});
