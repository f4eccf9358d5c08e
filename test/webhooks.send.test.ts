// One webhook attempt (common/webhooks/send.ts) against receivers of the test's own: where it
// connects, through which agent, and how long it may take.
import { spawn } from 'node:child_process';
import http, { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setWebhookPolicy } from '../common/webhooks/policy.js';
import { sendWebhook, type Attempt } from '../common/webhooks/send.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TIMEOUT_MS = 400;

/** A server on loopback that answers 200 and counts what reached it. */
async function listen(): Promise<{ server: Server; port: number; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    request.resume();
    request.on('end', () => response.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, requests };
}

let receiver: Awaited<ReturnType<typeof listen>>;
let proxy: Awaited<ReturnType<typeof listen>>;

beforeAll(async () => {
  receiver = await listen();
  proxy = await listen();
  setWebhookPolicy({
    WEBHOOK_ALLOWED_HOSTS: [`127.0.0.1:${receiver.port}`, 'hanging.example.test'],
    WEBHOOK_RETRY_SCHEDULE: [],
    WEBHOOK_TIMEOUT_MS: TIMEOUT_MS,
  });
});

afterAll(async () => {
  for (const { server } of [receiver, proxy]) await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  receiver.requests.length = 0;
  proxy.requests.length = 0;
});

const send = (url: string, resolve?: Parameters<typeof sendWebhook>[3]) =>
  sendWebhook(url, { 'webhook-id': 'evt_test' }, '{}', resolve);

test.each([
  ['::169.254.169.254', 6],
  ['::a9fe:a9fe', 6],
  ['::ffff:169.254.169.254', 6],
  ['64:ff9b::a9fe:a9fe', 6],
  ['64:ff9b:1::a00:1', 6],
  ['2002:a9fe:a9fe::1', 6],
  ['2001::1', 6],
  ['fe80::1', 6],
  ['10.0.0.1', 4],
])(
  'a name resolving to %s is refused at delivery, before any connection',
  async (address, family) => {
    const attempt = await send('https://hooks.example.test/hook', async () => [
      { address: '8.8.8.8', family: 4 },
      { address, family },
    ]);
    expect(attempt).toEqual<Attempt>({
      statusCode: null,
      error: 'the host resolves to a loopback, private, link-local or reserved address',
      durationMs: expect.any(Number),
    });
  },
);

test('a lookup that never answers fails the attempt at the delivery timeout', async () => {
  const attempt = await send('https://hanging.example.test/hook', () => new Promise(() => {}));
  expect(attempt).toEqual<Attempt>({
    statusCode: null,
    error: `no answer within ${TIMEOUT_MS / 1000} s`,
    durationMs: expect.any(Number),
  });
  expect(attempt.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  // Bounded by the timeout, give or take a loaded machine: not the resolver's own limit.
  expect(attempt.durationMs).toBeLessThan(TIMEOUT_MS + 2_000);
});

test("an attempt goes through an agent of its own, never Node's global one (which an environment proxy configures)", async () => {
  const global = http.globalAgent;
  const used: string[] = [];
  // What NODE_USE_ENV_PROXY does: a process-wide agent that sends requests elsewhere.
  class RecordingAgent extends http.Agent {
    override createConnection(
      ...args: Parameters<http.Agent['createConnection']>
    ): ReturnType<http.Agent['createConnection']> {
      used.push('global agent');
      return super.createConnection(...args);
    }
  }
  http.globalAgent = new RecordingAgent();
  try {
    const attempt = await send(`http://127.0.0.1:${receiver.port}/hook`);
    expect(attempt).toMatchObject({ statusCode: 200, error: null });
  } finally {
    http.globalAgent.destroy();
    http.globalAgent = global;
  }
  expect(receiver.requests).toEqual(['POST /hook']);
  expect(used).toEqual([]);
});

test('with NODE_USE_ENV_PROXY and HTTP(S)_PROXY set, a delivery goes straight to the receiver, not the proxy', async () => {
  const module = (file: string) => pathToFileURL(path.join(root, 'dist', file)).href;
  const script = `
    const { setWebhookPolicy } = await import(${JSON.stringify(module('common/webhooks/policy.js'))});
    const { sendWebhook } = await import(${JSON.stringify(module('common/webhooks/send.js'))});
    setWebhookPolicy({ WEBHOOK_ALLOWED_HOSTS: ['127.0.0.1:${receiver.port}'],
                       WEBHOOK_RETRY_SCHEDULE: [], WEBHOOK_TIMEOUT_MS: 5000 });
    const attempt = await sendWebhook('http://127.0.0.1:${receiver.port}/hook', {}, '{}');
    process.stdout.write(JSON.stringify(attempt));`;
  const proxyUrl = `http://127.0.0.1:${proxy.port}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_USE_ENV_PROXY: '1',
      HTTP_PROXY: proxyUrl,
      HTTPS_PROXY: proxyUrl,
      http_proxy: proxyUrl,
      https_proxy: proxyUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  expect(JSON.parse(stdout)).toMatchObject({ statusCode: 200, error: null });
  expect(receiver.requests).toEqual(['POST /hook']);
  expect(proxy.requests).toEqual([]);
});
