// Request bodies sent with Content-Encoding: gzip, deflate, br and zstd are accepted; a body that does
// not decode is 400 in the envelope; the 100 KiB limit applies to the decoded body.
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { startTestService, type TestService } from './helpers/harness.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

const encoders: Record<string, (data: Buffer) => Buffer> = {
  gzip: gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
  zstd: zstdCompressSync,
};

async function post(path: string, body: Buffer, encoding: string) {
  const response = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'Content-Encoding': encoding,
      'X-Service-API-Key': service.tenant.key,
    },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    body: JSON.parse(text) as { error: Record<string, unknown> } & Record<string, unknown>,
    headers: response.headers,
  };
}

describe.each(Object.keys(encoders))('Content-Encoding: %s', (encoding) => {
  const encode = encoders[encoding]!;

  test('a compressed body is decoded and written', async () => {
    const user = { email: `${encoding}@example.org`, first_name: 'Zip', last_name: 'Ped' };
    const response = await post(
      '/api/v1/users',
      encode(Buffer.from(JSON.stringify(user))),
      encoding,
    );
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ object: 'user', email: user.email });
  });

  test('a body that does not decode is 400 invalid_json in the envelope, and nothing is written', async () => {
    const before = await service.count('users');
    for (const body of [
      Buffer.from('{"not": "compressed"}'),
      encode(Buffer.from('{"a":1}')).subarray(0, 5),
    ]) {
      const response = await post('/api/v1/users', body, encoding);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'invalid_json',
      });
      expect(response.body.error.request_id).toBe(response.headers.get('Request-Id'));
    }
    expect(await service.count('users')).toBe(before);
  });

  test('a decompression bomb stops at the body limit: 413, nothing written', async () => {
    // 20 MiB of JSON that compresses to a few kilobytes.
    const padding = ' '.repeat(20 * 1024 * 1024);
    const bomb = encode(
      Buffer.from(`{"email":"bomb@example.org",${padding}"first_name":"B","last_name":"B"}`),
    );
    expect(bomb.length).toBeLessThan(100 * 1024);
    const before = await service.count('users');
    const response = await post('/api/v1/users', bomb, encoding);
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe('payload_too_large');
    expect(await service.count('users')).toBe(before);
  });
});

test('an encoding the service does not decode is 415', async () => {
  const response = await post('/api/v1/users', Buffer.from('{}'), 'compress');
  expect(response.status).toBe(415);
  expect(response.body.error.code).toBe('unsupported_media_type');
});
