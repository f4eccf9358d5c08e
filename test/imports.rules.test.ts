// Imports judge every row with the rules of the single-record write (integration.md §3), find
// donors by external id and email, and treat another institution's ids as ids that do not exist.
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import { rowErrors, settled, upload } from './helpers/imports.js';

let service: TestService;
let other: Tenant;
let donorId: number;
let fundId: number;
let otherDonorId: number;
let otherFundId: number;
let otherTagId: number;

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  donorId = (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/donors', {
        body: {
          role: 'Individual',
          first_name: 'Ada',
          last_name: 'Lovelace',
          email: 'ada@example.org',
          external_id: 'X-1',
        },
      }),
    )
  ).id;
  fundId = (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/funds', {
        body: { name: 'General', code: 'GEN', restriction: 'unrestricted' },
      }),
    )
  ).id;
  otherDonorId = (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/donors', {
        key: other.key,
        body: {
          role: 'Individual',
          first_name: 'Other',
          last_name: 'Donor',
          email: 'other@example.org',
          external_id: 'O-1',
        },
      }),
    )
  ).id;
  otherFundId = (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/funds', {
        key: other.key,
        body: { name: 'Theirs', code: 'OTH', restriction: 'unrestricted' },
      }),
    )
  ).id;
  otherTagId = (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/tags', { key: other.key, body: { name: 'Theirs' } }),
    )
  ).id;
});

afterAll(async () => {
  await service?.close();
});

/** The errors of the single-record dry run of the same body. */
async function singleDryRunErrors(path: string, body: Record<string, unknown>) {
  const answer = await service.call<{ error: { errors?: unknown[] } }>(
    'POST',
    `${path}?dry_run=true`,
    { body, headers: { 'Idempotency-Key': `dry-${Math.random()}` } },
  );
  expect(answer.status).toBe(422);
  return answer.body.error.errors;
}

describe('a row’s errors are the errors of the single-record dry run of the same body', () => {
  const donorRows = () => [
    { role: 'Individual' },
    { role: 'Alien', first_name: 'A', last_name: 'B', email: 'a1@example.org' },
    { role: 'Individual', first_name: 'A', last_name: 'B', email: 'not-an-email' },
    { role: 'Organization', organization_name: 'Acme', status: 'deceased', email: 'acme@x.org' },
    { role: 'Individual', first_name: 'A', last_name: 'B', email: 'e@x.org', nickname: 'z' },
    { role: 'Individual', first_name: 'A', last_name: 'B', assigned_user_id: 999_999 },
    { role: 'Individual', first_name: 'A', last_name: 'B', tag_ids: [otherTagId] },
    { role: 'Individual', first_name: 'A', last_name: 'B', email: 'ADA@example.org' },
    { role: 'Individual', first_name: 'A', last_name: 'B', external_id: 'X-1', email: 'n@x.org' },
    { role: 'Individual', first_name: 'A', last_name: 'B', gives_anonymously: 'yes' },
    { role: 'Individual', first_name: 'A'.repeat(101), last_name: 'B', id: 5 },
  ];
  const giftRows = () => [
    { donor_id: donorId, amount: -5, gift_date: '2026-02-30', subject: 'x' },
    { donor_id: otherDonorId, amount: 10, gift_date: '2026-01-01', subject: 'x', fund_id: fundId },
    {
      donor_id: donorId,
      amount: 10.123,
      gift_date: '2026-01-01',
      subject: 'x',
      fund_id: otherFundId,
    },
    {
      donor_id: donorId,
      amount: 10,
      gift_date: '2026-01-01',
      subject: 'split',
      designations: [{ fund_id: fundId, amount: 5 }],
    },
    { donor_id: donorId, amount: 'ten', gift_date: '2026-01-01', subject: 'x', fund_id: fundId },
    {
      donor_id: donorId,
      amount: 10,
      gift_date: '2026-01-01',
      subject: 'x',
      fund_id: fundId,
      check_number: '12',
    },
    { amount: 10, gift_date: '2026-01-01', subject: 'x', fund_id: fundId },
  ];

  test.each([
    ['donors', '/api/v1/donors', donorRows],
    ['gifts', '/api/v1/gifts', giftRows],
  ] as const)('%s', async (resource, path, rowsOf) => {
    const rows = rowsOf();
    const answer = await upload(service, `resource=${resource}&dry_run=true`, { rows });
    expect(answer.status).toBe(202);
    const done = await settled(service, answer.body.id);
    expect(done).toMatchObject({ status: 'validated', rows_failed: rows.length });
    const found = await rowErrors(service, answer.body.id);
    const expected = [];
    for (const [index, body] of rows.entries())
      expected.push({
        object: 'import_row_error',
        row: index + 2,
        errors: await singleDryRunErrors(path, body),
      });
    expect(found).toEqual(expected);
  });

  test('a CSV cell is read as the JSON value it stands for, and judged the same', async () => {
    const csv = `donor_id,amount,gift_date,subject,fund_id\n${donorId},ten,2026-01-01,x,${fundId}\n`;
    const answer = await upload(service, 'resource=gifts&dry_run=true', csv);
    await settled(service, answer.body.id);
    const [row] = await rowErrors(service, answer.body.id);
    expect(row!.errors).toEqual(
      await singleDryRunErrors('/api/v1/gifts', {
        donor_id: donorId,
        amount: 'ten',
        gift_date: '2026-01-01',
        subject: 'x',
        fund_id: fundId,
      }),
    );
  });
});

describe('another institution’s ids are ids that do not exist', () => {
  test('donor ids, external ids, emails and fund codes of another institution find nothing', async () => {
    const csv = [
      'donor_id,donor_external_id,donor_email,amount,gift_date,subject,designations',
      `${otherDonorId},,,10,2026-01-01,x,GEN:10`,
      `,O-1,,10,2026-01-01,x,GEN:10`,
      `,,other@example.org,10,2026-01-01,x,GEN:10`,
      `,X-1,,10,2026-01-01,x,OTH:10`,
    ].join('\n');
    const answer = await upload(service, 'resource=gifts', csv);
    const done = await settled(service, answer.body.id);
    expect(done).toMatchObject({ status: 'completed', rows_failed: 4, rows_succeeded: 0 });
    expect((await rowErrors(service, answer.body.id)).map((row) => row.errors)).toEqual([
      [
        {
          param: 'donor_id',
          code: 'reference_not_found',
          message: 'does not name an existing donor',
        },
      ],
      [
        {
          param: 'donor_external_id',
          code: 'reference_not_found',
          message: 'does not name an existing donor',
        },
      ],
      [
        {
          param: 'donor_email',
          code: 'reference_not_found',
          message: 'does not name an existing donor',
        },
      ],
      [
        {
          param: 'designations.0.fund_code',
          code: 'reference_not_found',
          message: 'does not name an existing fund',
        },
      ],
    ]);
    expect(await service.count('gifts')).toBe(0);
  });

  test('another institution’s import is as absent as a missing one', async () => {
    const theirs = await upload(
      service,
      'resource=donors&dry_run=true',
      {
        rows: [{ role: 'Household', last_name: 'Theirs', email: 'h@x.org' }],
      },
      { key: other.key },
    );
    expect(theirs.status).toBe(202);
    for (const [method, path] of [
      ['GET', `/api/v1/imports/${theirs.body.id}`],
      ['GET', `/api/v1/imports/${theirs.body.id}/errors`],
      ['POST', `/api/v1/imports/${theirs.body.id}/commit`],
      ['POST', `/api/v1/imports/${theirs.body.id}/cancel`],
    ] as const) {
      const answer = await service.call<{ error: { code: string } }>(
        method,
        path,
        method === 'POST' ? { body: {} } : {},
      );
      expect([path, answer.status, answer.body.error.code]).toEqual([
        path,
        404,
        'resource_not_found',
      ]);
    }
    const mine = await service.call<{ data: { id: number }[] }>('GET', '/api/v1/imports');
    expect(mine.body.data.map((imp) => imp.id)).not.toContain(theirs.body.id);
  });
});

describe('donor matching', () => {
  const row = (extra: Record<string, unknown>) => ({
    role: 'Individual',
    first_name: 'Augusta',
    last_name: 'King',
    ...extra,
  });

  test('on_match error (the default) reports the row as the create would', async () => {
    const answer = await upload(service, 'resource=donors', {
      rows: [row({ external_id: 'X-1' }), row({ email: 'Ada@Example.org', external_id: 'N-1' })],
    });
    await settled(service, answer.body.id);
    expect((await rowErrors(service, answer.body.id)).map((found) => found.errors)).toEqual([
      [
        {
          param: 'external_id',
          code: 'already_in_use',
          message: 'is already used by another donor',
        },
      ],
      [{ param: 'email', code: 'already_in_use', message: 'is already used by another donor' }],
    ]);
  });

  test('on_match skip leaves the donor; on_match update changes it with one donor.updated event', async () => {
    const skip = await upload(service, 'resource=donors&on_match=skip', {
      rows: [row({ external_id: 'X-1', phone: '1' })],
    });
    expect(await settled(service, skip.body.id)).toMatchObject({
      status: 'completed',
      rows_skipped: 1,
      rows_succeeded: 0,
    });
    const update = await upload(service, 'resource=donors&on_match=update', {
      rows: [row({ email: 'ada@example.org', phone: '+1 555 0100' })],
    });
    expect(await settled(service, update.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 1,
    });
    const donor = await service.call<{ first_name: string; phone: string; external_id: string }>(
      'GET',
      `/api/v1/donors/${donorId}`,
    );
    expect(donor.body).toMatchObject({
      first_name: 'Augusta',
      phone: '+1 555 0100',
      external_id: 'X-1',
    });
    const updates = await service.db.anyFirst(sql.unsafe`
      SELECT previous_attributes->>'first_name' FROM events
      WHERE type = 'donor.updated' AND object_id = ${donorId}`);
    expect(updates).toEqual(['Ada']);
  });

  test('rows of one file that repeat an email or external id are reported, not merged', async () => {
    const answer = await upload(service, 'resource=donors', {
      rows: [
        row({ email: 'twin@example.org', external_id: 'T-1' }),
        row({ email: 'TWIN@example.org', external_id: 'T-2' }),
        row({ email: 'third@example.org', external_id: 'T-1' }),
      ],
    });
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 1,
      rows_failed: 2,
    });
    expect(await rowErrors(service, answer.body.id)).toEqual([
      {
        object: 'import_row_error',
        row: 3,
        errors: [
          {
            param: 'email',
            code: 'already_in_use',
            message: 'repeats the email of row 2 of this file',
          },
        ],
      },
      {
        object: 'import_row_error',
        row: 4,
        errors: [
          {
            param: 'external_id',
            code: 'already_in_use',
            message: 'repeats the external_id of row 2 of this file',
          },
        ],
      },
    ]);
    const twins = await service.call<{ data: unknown[] }>('GET', '/api/v1/donors?q=twin');
    expect(twins.body.data).toHaveLength(1);
  });
});

describe('a commit judges each row again as it writes it', () => {
  test('a row that became invalid after the dry run is reported, and the others are written', async () => {
    const closing = await created<{ id: number }>(
      service.call('POST', '/api/v1/funds', {
        body: { name: 'Closing soon', code: 'CLS', restriction: 'unrestricted' },
      }),
    );
    const leaving = await created<{ id: number }>(
      service.call('POST', '/api/v1/donors', {
        body: {
          role: 'Individual',
          first_name: 'Gone',
          last_name: 'Soon',
          email: 'gone-soon@example.org',
        },
      }),
    );
    const gifts = await upload(service, 'resource=gifts&dry_run=true', {
      rows: [
        {
          donor_id: donorId,
          amount: 5,
          gift_date: '2026-04-01',
          subject: 'Stays',
          fund_id: fundId,
        },
        {
          donor_id: donorId,
          amount: 5,
          gift_date: '2026-04-01',
          subject: 'Closed',
          fund_id: closing.id,
        },
        {
          donor_id: leaving.id,
          amount: 5,
          gift_date: '2026-04-01',
          subject: 'Donor deleted',
          fund_id: fundId,
        },
      ],
    });
    const donors = await upload(service, 'resource=donors&dry_run=true', {
      rows: [
        { role: 'Household', last_name: 'Early', email: 'early@example.org' },
        { role: 'Household', last_name: 'Late', email: 'taken-meanwhile@example.org' },
      ],
    });
    expect((await settled(service, gifts.body.id)).rows_failed).toBe(0);
    expect((await settled(service, donors.body.id)).rows_failed).toBe(0);

    const closed = await service.call('PATCH', `/api/v1/funds/${closing.id}`, {
      body: { status: 'closed' },
    });
    expect(closed.status).toBe(200);
    expect((await service.call('DELETE', `/api/v1/donors/${leaving.id}`)).status).toBe(200);
    await created(
      service.call('POST', '/api/v1/donors', {
        body: { role: 'Household', last_name: 'Quick', email: 'taken-meanwhile@example.org' },
      }),
    );
    for (const [id, failed] of [
      [gifts.body.id, 2],
      [donors.body.id, 1],
    ]) {
      const commit = await service.call('POST', `/api/v1/imports/${id}/commit`, { body: {} });
      expect(commit.status).toBe(200);
      expect(await settled(service, id!)).toMatchObject({
        status: 'completed',
        rows_succeeded: 1,
        rows_failed: failed,
      });
    }
    expect((await rowErrors(service, gifts.body.id)).map((row) => row.errors)).toEqual([
      [{ param: 'fund_id', code: 'reference_inactive', message: 'names a fund that is closed' }],
      [
        {
          param: 'donor_id',
          code: 'reference_not_found',
          message: 'does not name an existing donor',
        },
      ],
    ]);
    expect((await rowErrors(service, donors.body.id)).map((row) => row.errors)).toEqual([
      [{ param: 'email', code: 'already_in_use', message: 'is already used by another donor' }],
    ]);
    const written = await service.db.anyFirst(sql.unsafe`
      SELECT subject FROM gifts WHERE gift_date = '2026-04-01'`);
    expect(written).toEqual(['Stays']);
  });
});
