// Imports: bad input gets a clear answer in the error envelope and stores nothing; retries,
// control totals, all_or_nothing, cancel and the CSV downloads (integration.md §3).
import { readFile } from 'node:fs/promises';
import { sql } from 'slonik';
import { insertApiKey, revokeApiKey } from '../common/institutions.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { holdDonorRow } from './helpers/rowLock.js';
import { waitFor } from './helpers/wait.js';
import { getText, rowErrors, settled, upload, type ImportBody } from './helpers/imports.js';

const MAX_BYTES = 50_000;
let service: TestService;

beforeAll(async () => {
  service = await startTestService({
    IMPORT_MAX_BYTES: String(MAX_BYTES),
    IMPORT_MAX_ROWS: '20',
    IMPORT_CHUNK_ROWS: '3',
  });
});

afterAll(async () => {
  await service?.close();
});

interface Refusal {
  error: {
    code: string;
    message: string;
    param?: string;
    errors?: { param: string; code: string }[];
  };
}

/** Nothing of a refused upload is left: no file, no chunk, no import. */
async function expectNothingStored() {
  expect(await service.count('import_files')).toBe(0);
  expect(await service.count('import_chunks')).toBe(0);
  expect(await service.count('imports')).toBe(0);
}

/** A POST /imports with raw bytes, optionally streamed without a Content-Length. */
async function rawUpload(query: string, bytes: Buffer, streamed = false) {
  const body = streamed
    ? new ReadableStream({
        start(controller) {
          for (let at = 0; at < bytes.length; at += 4096)
            controller.enqueue(bytes.subarray(at, at + 4096));
          controller.close();
        },
      })
    : bytes;
  const response = await fetch(`${service.api.url}/api/v1/imports?${query}`, {
    method: 'POST',
    headers: { 'X-Service-API-Key': service.tenant.key, 'Content-Type': 'text/csv' },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: response.status, body: (await response.json()) as Refusal };
}

const donorHeader = 'role,first_name,last_name,email';

describe('bad input stores nothing', () => {
  afterEach(expectNothingStored);

  test.each([
    ['no resource', '', 400, 'parameter_missing'],
    ['an unknown resource', 'resource=pledges', 400, 'invalid_parameter'],
    ['an unknown mode', 'resource=donors&mode=some', 400, 'invalid_parameter'],
    ['an unknown parameter', 'resource=donors&force=true', 400, 'invalid_parameter'],
    [
      'a control total that is no number',
      'resource=gifts&expected_amount=1.234',
      400,
      'invalid_parameter',
    ],
  ])('%s is 400', async (_case, query, status, code) => {
    const answer = await service.call<Refusal>('POST', `/api/v1/imports?${query}`, {
      rawBody: `${donorHeader}\nIndividual,A,B,a@example.org\n`,
      headers: { 'Content-Type': 'text/csv' },
    });
    expect([answer.status, answer.body.error.code]).toEqual([status, code]);
  });

  test('a body that is neither CSV nor JSON is 415', async () => {
    const answer = await service.call<Refusal>('POST', '/api/v1/imports?resource=donors', {
      rawBody: 'hello',
      headers: { 'Content-Type': 'application/pdf' },
    });
    expect([answer.status, answer.body.error.code]).toEqual([415, 'unsupported_media_type']);
  });

  test.each([
    ['a header without rows', `${donorHeader}\n`, 'file', 'has no rows'],
    [
      'a quote that never closes',
      `${donorHeader}\nIndividual,"Ada,B,a@example.org\n`,
      'file',
      'never closed',
    ],
    [
      'a row with 10,000 columns',
      `${donorHeader}\n${'x,'.repeat(9_999)}x\n`,
      'file',
      'row 2 has 10000 cells',
    ],
    ['a header of 10,000 columns', `${'c,'.repeat(9_999)}c\nx\n`, 'file', 'at most 200'],
    ['a NUL character', `${donorHeader}\nIndividual,A\u0000,B,a@example.org\n`, 'file', 'NUL'],
  ])('%s is 422 validation_failed', async (_case, csv, param, words) => {
    const answer = await upload(service, 'resource=donors', csv);
    const body = answer.body as unknown as Refusal;
    expect(answer.status).toBe(422);
    expect(body.error.code).toBe('validation_failed');
    expect(body.error.param).toBe(param);
    expect(body.error.message).toContain(words);
  });

  test('JSON rows naming more than 200 distinct keys between them are 422, as a CSV that wide', async () => {
    // 11 rows of 20 keys each, none shared: 220 columns, each row narrow by itself.
    const rows = Array.from({ length: 11 }, (_, row) =>
      Object.fromEntries(Array.from({ length: 20 }, (_, key) => [`k${row}_${key}`, 'x'])),
    );
    const answer = await upload(service, 'resource=donors', { rows });
    const body = answer.body as unknown as Refusal;
    expect([answer.status, body.error.code, body.error.param]).toEqual([
      422,
      'validation_failed',
      'file',
    ]);
    expect(body.error.message).toContain('at most 200 columns');
    expect(body.error.message).toContain('row 12');
  });

  test('an expected_amount wider than an import keeps is 400, before anything is stored', async () => {
    const csv = `donor_email,amount,gift_date,subject\nx@example.org,10.00,2026-01-01,A\n`;
    for (const amount of ['100000000000000.00', '1'.padEnd(30, '0')]) {
      const answer = await upload(service, `resource=gifts&expected_amount=${amount}`, csv);
      const body = answer.body as unknown as Refusal;
      expect([answer.status, body.error.code, body.error.param]).toEqual([
        400,
        'invalid_parameter',
        'expected_amount',
      ]);
      expect(body.error.message).toContain('at most 99999999999999.99');
    }
  });

  test('gift amounts that add up to more than an import keeps are 422, not a failure of ours', async () => {
    const csv = `donor_email,amount,gift_date,subject\nx@example.org,99999999999999999999,2026-01-01,A\n`;
    const answer = await upload(service, 'resource=gifts', csv);
    const body = answer.body as unknown as Refusal;
    expect([answer.status, body.error.code, body.error.param]).toEqual([
      422,
      'validation_failed',
      'file',
    ]);
    expect(body.error.message).toContain('99999999999999.99');
  });

  test('an empty file is no body: 400 invalid_json, as every write without one', async () => {
    const answer = await upload(service, 'resource=donors', '');
    const body = answer.body as unknown as Refusal;
    expect(answer.status).toBe(400);
    expect(body.error.code).toBe('invalid_json');
    expect(body.error.message).toContain('text/csv');
    expect(await service.count('imports')).toBe(0);
  });

  test('unknown columns are reported by name, not ignored', async () => {
    const answer = await upload(
      service,
      'resource=donors',
      `role,first_name,last_name,shoe_size,address.planet\nIndividual,A,B,9,Mars\n`,
    );
    const body = answer.body as unknown as Refusal;
    expect(answer.status).toBe(422);
    expect(body.error.errors).toEqual([
      expect.objectContaining({ param: 'columns.3', code: 'unknown_field' }),
      expect.objectContaining({ param: 'columns.4', code: 'unknown_field' }),
    ]);
    expect(JSON.stringify(body)).toContain('shoe_size');
  });

  test('bytes that are not UTF-8 are 422', async () => {
    const answer = await rawUpload(
      'resource=donors',
      Buffer.concat([
        Buffer.from(`${donorHeader}\nIndividual,`),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(',B,x@y.org\n'),
      ]),
    );
    expect([answer.status, answer.body.error.code]).toEqual([422, 'validation_failed']);
    expect(answer.body.error.message).toContain('UTF-8');
  });

  test('a file over IMPORT_MAX_BYTES is 413, declared or streamed', async () => {
    const csv = Buffer.from(`${donorHeader}\nIndividual,"${'a'.repeat(MAX_BYTES)}",B,x@y.org\n`);
    for (const streamed of [false, true]) {
      const answer = await rawUpload('resource=donors', csv, streamed);
      expect([answer.status, answer.body.error.code]).toEqual([413, 'payload_too_large']);
      expect(answer.body.error.message).toContain('IMPORT_MAX_BYTES');
    }
  });

  test('a file over IMPORT_MAX_ROWS is 413', async () => {
    const rows = Array.from({ length: 21 }, (_, index) => `Individual,A,B,r${index}@example.org`);
    const answer = await upload(service, 'resource=donors', `${donorHeader}\n${rows.join('\n')}\n`);
    const body = answer.body as unknown as Refusal;
    expect([answer.status, body.error.code]).toEqual([413, 'payload_too_large']);
    expect(body.error.message).toContain('IMPORT_MAX_ROWS');
  });

  test('JSON that is not {"rows": [...]} is 400 invalid_json', async () => {
    for (const text of ['{"rows": 5}', '[1,2]', '{"rows": [']) {
      const answer = await service.call<Refusal>('POST', '/api/v1/imports?resource=donors', {
        rawBody: text,
        headers: { 'Content-Type': 'application/json' },
      });
      expect([answer.status, answer.body.error.code]).toEqual([400, 'invalid_json']);
    }
  });
});

describe('limits are inclusive', () => {
  test('a file of exactly IMPORT_MAX_BYTES, with a BOM, is accepted', async () => {
    const head = `\uFEFF${donorHeader}\nIndividual,"`;
    const tail = `",B,exact@example.org\n`;
    const filler = MAX_BYTES - Buffer.byteLength(head) - Buffer.byteLength(tail);
    const csv = Buffer.from(`${head}${'a'.repeat(filler)}${tail}`);
    expect(csv.length).toBe(MAX_BYTES);
    const answer = await rawUpload('resource=donors&dry_run=true', csv, true);
    expect(answer.status).toBe(202);
    const done = await settled(service, (answer.body as unknown as ImportBody).id);
    // Stored and judged: the one row's first_name is too long for a donor.
    expect(done).toMatchObject({ status: 'validated', rows_total: 1, rows_failed: 1 });
  });
});

describe('an Idempotency-Key on POST /imports', () => {
  test('a retry replays the import and stores nothing new; another file under the key is 422', async () => {
    const csv = `${donorHeader}\nIndividual,Key,Holder,key@example.org\n`;
    const headers = { 'Idempotency-Key': 'import-once' };
    const first = await upload(service, 'resource=donors&dry_run=true', csv, { headers });
    const again = await upload(service, 'resource=donors&dry_run=true', csv, { headers });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    const other = await upload(service, 'resource=donors&dry_run=true', `${csv}Individual,X,Y,\n`, {
      headers,
    });
    expect([other.status, (other.body as unknown as Refusal).error.code]).toEqual([
      422,
      'idempotency_key_request_mismatch',
    ]);
    const files = await service.db.anyFirst(sql.unsafe`SELECT id FROM import_files`);
    const imports = await service.db.anyFirst(sql.unsafe`
      SELECT id FROM imports WHERE id >= ${first.body.id}`);
    expect(imports).toEqual([first.body.id]);
    expect(files).toHaveLength(await service.count('imports'));
  });
});

describe('control totals, all_or_nothing, cancel', () => {
  const giftsCsv = (rows: string[]) => `donor_email,amount,gift_date,subject\n${rows.join('\n')}\n`;

  test('control totals that do not match fail the import before anything commits', async () => {
    const csv = giftsCsv(['x@example.org,10.00,2026-01-01,A', 'x@example.org,5.50,2026-01-01,B']);
    for (const query of ['expected_rows=3', 'expected_amount=15.49']) {
      const answer = await upload(service, `resource=gifts&${query}`, csv);
      expect(answer.status).toBe(202);
      expect(answer.body).toMatchObject({
        status: 'failed',
        failure: {
          code: 'control_total_mismatch',
          message: expect.stringContaining(query.split('=')[0]!),
        },
      });
    }
    const matching = await upload(
      service,
      'resource=gifts&dry_run=true&expected_rows=2&expected_amount=15.5',
      csv,
    );
    expect(matching.body.status).toBe('queued');
    expect(await service.count('gifts')).toBe(0);
  });

  test('all_or_nothing with one bad row writes nothing', async () => {
    const rows = Array.from(
      { length: 7 },
      (_, index) => `Individual,A${index},B,aon${index}@example.org`,
    );
    rows.push('Individual,Nameless,,bad@example.org');
    const before = await service.count('donors');
    const answer = await upload(
      service,
      'resource=donors&mode=all_or_nothing',
      `${donorHeader}\n${rows.join('\n')}\n`,
    );
    const done = await settled(service, answer.body.id);
    expect(done).toMatchObject({
      status: 'failed',
      rows_failed: 1,
      failure: { code: 'invalid_rows' },
    });
    expect(await service.count('donors')).toBe(before);
  });

  test('a validated dry run can be committed as a dry run (nothing happens), or cancelled for good', async () => {
    const answer = await upload(
      service,
      'resource=donors&dry_run=true',
      `${donorHeader}\nIndividual,C,D,cancel@example.org\n`,
    );
    await settled(service, answer.body.id);
    const preview = await service.call<ImportBody>(
      'POST',
      `/api/v1/imports/${answer.body.id}/commit?dry_run=true`,
      {
        body: {},
      },
    );
    expect([preview.status, preview.body.status]).toEqual([200, 'importing']);
    expect(
      (await service.call<ImportBody>('GET', `/api/v1/imports/${answer.body.id}`)).body.status,
    ).toBe('validated');
    const cancel = await service.call<ImportBody>(
      'POST',
      `/api/v1/imports/${answer.body.id}/cancel`,
      { body: {} },
    );
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ status: 'cancelled', failure: { code: 'cancelled' } });
    const commit = await service.call<Refusal>('POST', `/api/v1/imports/${answer.body.id}/commit`, {
      body: {},
    });
    expect([commit.status, commit.body.error.code]).toEqual([409, 'invalid_state_transition']);
    const events = await service.db.anyFirst(sql.unsafe`
      SELECT type FROM events WHERE object_type = 'import' AND object_id = ${answer.body.id} ORDER BY seq`);
    expect(events).toEqual(['import.created', 'import.cancelled']);
  });

  test('a cancel while importing stops between chunks, and what it says was written was written', async () => {
    const rows = Array.from(
      { length: 20 },
      (_, index) => `Individual,Stop${index},B,stop${index}@example.org`,
    );
    const answer = await upload(service, 'resource=donors', `${donorHeader}\n${rows.join('\n')}\n`);
    const cancel = await service.call<ImportBody>(
      'POST',
      `/api/v1/imports/${answer.body.id}/cancel`,
      { body: {} },
    );
    const done = await settled(service, answer.body.id);
    // However far it got, the figures are the rows: nothing half-written, nothing after the stop.
    const written = await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM donors WHERE first_name LIKE 'Stop%'`);
    expect(written).toBe(done.rows_succeeded);
    expect(done.status).toBe(cancel.status === 200 ? 'cancelled' : 'completed');
    if (cancel.status === 200) expect(done.failure?.message).toMatch(/^Cancelled while/);
    const created = await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM events WHERE type = 'donor.created' AND data->>'first_name' LIKE 'Stop%'`);
    expect(created).toBe(written);
  });
});

describe('errors.csv and templates', () => {
  test('a formula cell is stored as sent, and neutralised in errors.csv', async () => {
    const csv = [
      donorHeader,
      'Individual,"=HYPERLINK(""http://evil.example"",""x"")",Formula,formula@example.org',
      'Individual,"=1+2",,noname@example.org',
    ].join('\n');
    const answer = await upload(service, 'resource=donors', csv);
    await settled(service, answer.body.id);
    const stored = await service.db.oneFirst(sql.unsafe`
      SELECT first_name FROM donors WHERE email = 'formula@example.org'`);
    expect(stored).toBe('=HYPERLINK("http://evil.example","x")');
    expect(await rowErrors(service, answer.body.id)).toHaveLength(1);
    const download = await getText(service, `/api/v1/imports/${answer.body.id}/errors.csv`);
    expect(download.status).toBe(200);
    expect(download.type).toMatch(/^text\/csv/);
    expect(download.text).toBe(
      `${donorHeader},errors\r\nIndividual,'=1+2,,noname@example.org,last_name: is required (required)\r\n`,
    );
  });

  test('the templates are the columns of each resource', async () => {
    const donors = await getText(service, '/api/v1/imports/templates/donors.csv');
    expect(donors.status).toBe(200);
    expect(donors.text.trim().split(',')).toEqual(
      expect.arrayContaining(['external_id', 'address.city', 'tag_ids']),
    );
    const gifts = await getText(service, '/api/v1/imports/templates/gifts.csv');
    expect(gifts.text).toContain('donor_external_id,donor_email');
    // The downloadable copies in docs/ are the same files.
    expect(await readFile('docs/templates/donors.csv', 'utf8')).toBe(donors.text);
    expect(await readFile('docs/templates/gifts.csv', 'utf8')).toBe(gifts.text);
  });
});

test('rows_processed advances while an import runs: the chunks written show while another waits', async () => {
  const donor = (email: string) =>
    service.call<{ id: number }>('POST', '/api/v1/donors', {
      body: { role: 'Individual', first_name: 'P', last_name: 'Q', email },
    });
  const free = (await donor('free@example.org')).body.id;
  const held = (await donor('held@example.org')).body.id;
  const fund = await service.call('POST', '/api/v1/funds', {
    body: { name: 'Progress', code: 'PRG', restriction: 'unrestricted' },
  });
  expect(fund.status).toBe(201);
  // Chunks of 3 rows: the first is the free donor's, the second the held one's, then the free
  // donor's again.
  const rowsOf = (donorId: number, count: number) =>
    Array.from({ length: count }, (_, index) => `${donorId},10,2026-06-01,PRG:10,row ${index}`);
  const csv = [
    'donor_id,amount,gift_date,designations,subject',
    ...rowsOf(free, 3),
    ...rowsOf(held, 3),
    ...rowsOf(free, 3),
  ].join('\n');
  const lock = await holdDonorRow(service.db, held);
  let id: number | undefined;
  try {
    const answer = await upload(service, 'resource=gifts', csv);
    expect(answer.status).toBe(202);
    id = answer.body.id;
    // The held donor's chunk waits for its row: the others are counted meanwhile.
    let seen: ImportBody | null = null;
    await waitFor(
      async () => {
        const now = await service.call<ImportBody>('GET', `/api/v1/imports/${answer.body.id}`);
        seen = now.body;
        return now.body.status === 'importing' && now.body.rows_processed >= 3;
      },
      20_000,
      'chunks written while one waits',
    );
    expect(seen!).toMatchObject({ status: 'importing', rows_total: 9 });
    expect(seen!.rows_processed).toBeLessThan(9);
  } finally {
    await lock.release();
  }
  const done = await settled(service, id!);
  expect(done).toMatchObject({ status: 'completed', rows_processed: 9, rows_succeeded: 9 });
});

test('an import whose API key is revoked mid-way fails, and no chunk commits after the revocation', async () => {
  const key = await insertApiKey(service.db, service.tenant.institutionId);
  const donor = async (email: string) =>
    (
      await service.call<{ id: number }>('POST', '/api/v1/donors', {
        body: { role: 'Individual', first_name: 'R', last_name: 'K', email },
      })
    ).body.id;
  const free = await donor('revoked-free@example.org');
  const held = await donor('revoked-held@example.org');
  const fund = await service.call('POST', '/api/v1/funds', {
    body: { name: 'Revoked', code: 'RVK', restriction: 'unrestricted' },
  });
  expect(fund.status).toBe(201);
  // Chunks of 3 rows: the free donor's, the held donor's (it waits for the row), the free one's.
  const rowsOf = (donorId: number, from: number) =>
    Array.from(
      { length: 3 },
      (_, index) => `${donorId},10,2026-06-01,RVK:10,revoked ${from + index}`,
    );
  const csv = [
    'donor_id,amount,gift_date,designations,subject',
    ...rowsOf(free, 0),
    ...rowsOf(held, 3),
    ...rowsOf(free, 6),
  ].join('\n');
  const written = async () =>
    Number(
      await service.db.oneFirst(sql.unsafe`
        SELECT count(*)::int FROM gifts WHERE subject LIKE 'revoked %'`),
    );
  const lock = await holdDonorRow(service.db, held);
  let id: number | undefined;
  let atRevocation: number;
  try {
    const answer = await upload(service, 'resource=gifts', csv, { key: key.key });
    expect(answer.status).toBe(202);
    id = answer.body.id;
    // Both free chunks written; the held one is in flight, its rows judged and waiting.
    await waitFor(
      async () => {
        const now = await service.call<ImportBody>('GET', `/api/v1/imports/${id}`);
        return now.body.status === 'importing' && now.body.rows_processed === 6;
      },
      20_000,
      'the free chunks written while the held one waits',
    );
    await revokeApiKey(service.db, key.id);
    atRevocation = await written();
    expect(atRevocation).toBe(6);
  } finally {
    await lock.release();
  }
  const done = await settled(service, id!);
  expect(done).toMatchObject({
    status: 'failed',
    rows_total: 9,
    rows_processed: 6,
    rows_succeeded: 6,
    failure: {
      code: 'api_key_revoked',
      message: expect.stringContaining(`API key that created this import (${key.id}) was revoked`),
    },
  });
  expect(done.completed_at).not.toBeNull();
  expect(await written()).toBe(atRevocation);
  // Each written row's event; the import's own: its create, and no import.completed.
  const giftEvents = await service.db.oneFirst(sql.unsafe`
    SELECT count(*)::int FROM events
    WHERE type = 'gift.created' AND data->>'subject' LIKE 'revoked %'`);
  expect(giftEvents).toBe(6);
  const importEvents = await service.db.anyFirst(sql.unsafe`
    SELECT type FROM events WHERE object_type = 'import' AND object_id = ${id!} ORDER BY seq`);
  expect(importEvents).toEqual(['import.created']);
});
