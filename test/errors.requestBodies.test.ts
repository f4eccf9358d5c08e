// Error answers to request bodies that cannot be read: malformed, wrong type, too large.
import { expectError, refused, send, setUpErrorTests, validDonor } from './helpers/errors.js';

setUpErrorTests();

describe('request bodies', () => {
  test.each([
    ['an unterminated object', '{"role":"Individual"'],
    ['a missing value', '{"role":}'],
    ['single quotes', "{'role':'Individual'}"],
    ['a trailing comma', '{"role":"Individual",}'],
    ['bare words', 'role=Individual'],
    ['a JSON object followed by garbage', '{"role":"Individual"} x'],
  ])('%s is 400 invalid_json', async (_label, raw) => {
    const response = await refused('POST', '/api/v1/donors', {
      raw,
      headers: { 'Content-Type': 'application/json' },
    });
    const error = expectError(response, 400, 'invalid_request_error', 'invalid_json');
    expect(error.message).not.toContain('Unexpected token');
  });

  test.each([
    ['an array', '[]'],
    ['an array holding a valid donor', JSON.stringify([validDonor()])],
    ['a string', '"donor"'],
    ['a number', '42'],
    ['null', 'null'],
    ['a boolean', 'true'],
  ])('JSON that is %s rather than an object is 400 invalid_json on create', async (_label, raw) => {
    const response = await refused('POST', '/api/v1/donors', {
      raw,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(response, 400, 'invalid_request_error', 'invalid_json');
  });

  test.each([['[]'], ['"x"'], ['0'], ['null']])(
    'JSON %s is 400 invalid_json on update and changes nothing',
    async (raw) => {
      const created = await send<{ id: number; email: string }>('POST', '/api/v1/donors', {
        json: validDonor(),
      });
      expect(created.status).toBe(201);
      const response = await send('PATCH', `/api/v1/donors/${created.body.id}`, {
        raw,
        headers: { 'Content-Type': 'application/json' },
      });
      expectError(response, 400, 'invalid_request_error', 'invalid_json');
      const after = await send<{ email: string; updated_at: string }>(
        'GET',
        `/api/v1/donors/${created.body.id}`,
      );
      expect(after.body).toMatchObject(created.body);
    },
  );

  test.each([
    ['text/plain', JSON.stringify(validDonor())],
    ['application/x-www-form-urlencoded', 'role=Individual&first_name=Ada&last_name=Lovelace'],
    [
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="role"\r\n\r\nIndividual\r\n--x--',
    ],
    ['application/xml', '<donor/>'],
    ['application/json-patch+json', '[]'],
  ])('a POST with Content-Type %s is 415 unsupported_media_type', async (contentType, raw) => {
    const response = await refused('POST', '/api/v1/donors', {
      raw,
      headers: { 'Content-Type': contentType },
    });
    expectError(response, 415, 'invalid_request_error', 'unsupported_media_type');
  });

  test('a POST with a JSON body but no Content-Type is 415 unsupported_media_type', async () => {
    const response = await refused('POST', '/api/v1/donors', { raw: JSON.stringify(validDonor()) });
    expectError(response, 415, 'invalid_request_error', 'unsupported_media_type');
  });

  test('a PATCH with Content-Type text/plain is 415 and changes nothing', async () => {
    const created = await send<{ id: number }>('POST', '/api/v1/donors', { json: validDonor() });
    const response = await send('PATCH', `/api/v1/donors/${created.body.id}`, {
      raw: JSON.stringify({ first_name: 'Changed' }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expectError(response, 415, 'invalid_request_error', 'unsupported_media_type');
    const after = await send('GET', `/api/v1/donors/${created.body.id}`);
    expect(after.body).toMatchObject(created.body);
  });

  test.each([
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/json;charset=UTF-8',
  ])('Content-Type %s is accepted', async (contentType) => {
    const response = await send('POST', '/api/v1/donors', {
      raw: JSON.stringify(validDonor()),
      headers: { 'Content-Type': contentType },
    });
    expect(response.status).toBe(201);
  });

  /** A donor body of exactly `bytes` bytes whose phone is far too long, so it fails validation. */
  const paddedBody = (bytes: number) => {
    const base = JSON.stringify({ ...validDonor(), phone: '' });
    return base.replace('"phone":""', `"phone":"${'1'.repeat(bytes - Buffer.byteLength(base))}"`);
  };

  test('a body of exactly 100 KiB is read (and here fails validation), one byte more is 413', async () => {
    const atLimit = paddedBody(100 * 1024);
    expect(Buffer.byteLength(atLimit)).toBe(102400);
    const read = await refused('POST', '/api/v1/donors', {
      raw: atLimit,
      headers: { 'Content-Type': 'application/json' },
    });
    const error = expectError(read, 422, 'invalid_request_error', 'validation_failed');
    expect(error.errors).toEqual([expect.objectContaining({ param: 'phone', code: 'too_long' })]);

    const over = paddedBody(100 * 1024 + 1);
    const response = await refused('POST', '/api/v1/donors', {
      raw: over,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(response, 413, 'invalid_request_error', 'payload_too_large');
  });

  test('a chunked body over 100 KiB (no Content-Length) is 413 payload_too_large', async () => {
    const response = await refused('POST', '/api/v1/donors', {
      raw: paddedBody(150 * 1024),
      chunked: true,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(response, 413, 'invalid_request_error', 'payload_too_large');
  });

  test('a string holding a NUL character is a validation error naming the field, not a 500', async () => {
    const body = {
      ...validDonor(),
      first_name: 'Ada\u0000',
      address: { line1: '1 Main St', city: 'Spring\u0000field' },
    };
    const response = await refused('POST', '/api/v1/donors', { json: body });
    const error = expectError(response, 422, 'invalid_request_error', 'validation_failed');
    expect(error.errors?.map((e) => [e.param, e.code])).toEqual([
      ['first_name', 'invalid_format'],
      ['address.city', 'invalid_format'],
    ]);
    const dryRun = await refused('POST', '/api/v1/donors?dry_run=true', { json: body });
    expectError(dryRun, 422, 'invalid_request_error', 'validation_failed');
  });

  test.each([
    ['objects', (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`],
    ['arrays', (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`],
  ])('deeply nested %s inside a body are 400 invalid_json, not a 500', async (_label, nest) => {
    const raw = JSON.stringify({ ...validDonor(), address: '__NESTED__' }).replace(
      '"__NESTED__"',
      nest(15000),
    );
    expect(Buffer.byteLength(raw)).toBeLessThan(100 * 1024);
    const response = await refused('POST', '/api/v1/donors', {
      raw,
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(response, 400, 'invalid_request_error', 'invalid_json');
  });
});
