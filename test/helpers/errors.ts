/**
 * What the errors.*.test.ts files share: requests sent byte for byte with node:http, and the
 * checks that an error answer is the documented envelope and that nothing was written.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { expectDocumented } from './contract.js';
import { startTestService, type TestService } from './harness.js';

export interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    request_id: string;
    param?: string;
    errors?: { param: string; code: string; message: string }[];
  };
}

export interface Sent<T = Record<string, unknown>> {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: T;
}

export interface SendOptions {
  /** The tenant's key unless given; null sends none. */
  key?: string | null;
  /** Header values are sent as they are; an array sends the header once per element. */
  headers?: Record<string, string | string[]>;
  /** A JSON body with Content-Type application/json unless headers say otherwise. */
  json?: unknown;
  /** Sent byte for byte; no Content-Type is added. */
  raw?: string;
  /** Stream the body in chunks without a Content-Length. */
  chunked?: boolean;
}

export let service: TestService;

/** Starts the file's own service; call once at the top of a test file. */
export function setUpErrorTests(): void {
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
  });
}

/** node:http rather than fetch, so that headers go out exactly as written (tabs, latin1, twice, absent). */
export function send<T = Record<string, unknown>>(
  method: string,
  path: string,
  options: SendOptions = {},
): Promise<Sent<T>> {
  const headers: Record<string, string | string[]> = {};
  const key = options.key === undefined ? service.tenant.key : options.key;
  if (key !== null) headers['X-Service-API-Key'] = key;
  let body = options.raw;
  if (body === undefined && options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['Content-Type'] = 'application/json';
  }
  Object.assign(headers, options.headers);
  if (body !== undefined && !options.chunked)
    headers['Content-Length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, service.url), { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const sent = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          body: (text ? JSON.parse(text) : null) as T,
        };
        // Every answer, however malformed the request, must be one the OpenAPI document allows.
        const fetchHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined)
            fetchHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        try {
          expectDocumented({
            method,
            path,
            status: sent.status,
            headers: fetchHeaders,
            body: sent.body,
          });
        } catch (error) {
          reject(error as Error);
          return;
        }
        resolve(sent);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined && options.chunked) {
      for (let offset = 0; offset < body.length; offset += 16 * 1024)
        req.write(body.slice(offset, offset + 16 * 1024));
    } else if (body !== undefined) {
      req.write(body);
    }
    req.end();
  });
}

/** Strings that would betray internals: stack frames, source paths, SQL or Postgres messages. */
const leaks = [
  /\n\s*at /,
  /\bat \S+ \(/,
  /\S+\.(ts|js|mjs|cjs):\d+/,
  /node_modules/,
  /\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|WHERE|RETURNING)\b/,
  /syntax error|violates|duplicate key|relation "|column "|invalid byte sequence|stack/i,
];

/** The documented envelope, with request_id equal to the Request-Id header, and nothing internal. */
export function expectError(
  response: Sent,
  status: number,
  type: string,
  code: string,
): ErrorEnvelope['error'] {
  const body = response.body as unknown as ErrorEnvelope;
  expect({ status: response.status, code: body?.error?.code }).toEqual({ status, code });
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ type, code, message: expect.any(String) });
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(response.headers['request-id']).toMatch(/^req_\w+$/);
  expect(body.error.request_id).toBe(response.headers['request-id']);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  for (const pattern of leaks) expect(response.text).not.toMatch(pattern);
  return body.error;
}

const tables = ['donors', 'gifts', 'funds', 'users', 'write_receipts'];
export async function rowCount(): Promise<number> {
  const counts = await Promise.all(tables.map((table) => service.count(table)));
  return counts.reduce((sum, n) => sum + n, 0);
}

let emailCounter = 0;
/** A donor create that would succeed, so that only the check under test can stop it. */
export const validDonor = () => ({
  role: 'Individual',
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: `donor${(emailCounter += 1)}@example.org`,
});

/** Sends a request that must fail and checks that nothing was written. */
export async function refused(method: string, path: string, options: SendOptions): Promise<Sent> {
  const before = await rowCount();
  const response = await send(method, path, options);
  expect(await rowCount()).toBe(before);
  return response;
}
