// Imports (integration.md §3): the contract end to end against the real service.
import { sql } from 'slonik';
import { z } from 'zod';
import { startTestService, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import { getText, rowErrors, settled, upload } from './helpers/imports.js';

const giftRow = z.object({
  donor_id: z.number(),
  amount: z.string(),
  designations: z.array(z.unknown()),
});

let service: TestService;
let fundId: number;

beforeAll(async () => {
  service = await startTestService();
  const fund = await created<{ id: number }>(
    service.call('POST', '/api/v1/funds', {
      body: { name: 'General Fund', code: 'GEN', restriction: 'unrestricted' },
    }),
  );
  fundId = fund.id;
  await created(
    service.call('POST', '/api/v1/funds', {
      body: { name: 'Athletics', code: 'ATH', restriction: 'unrestricted' },
    }),
  );
});

afterAll(async () => {
  await service?.close();
});

const donorsCsv = [
  'external_id,role,first_name,last_name,email,address.city,address.country,gives_anonymously',
  'A-1,Individual,Ada,Lovelace,ada@example.org,London,GB,true',
  'A-2,Individual,Grace,,grace@example.org,,,',
  'A-3,Organization,,,acme@example.org,,,',
  'A-4,Household,,Hopper,hopper@example.org,Arlington,US,false',
].join('\n');

describe('a donors CSV: dry run, errors, then commit', () => {
  test('validates every row, lists the bad ones, commits the good ones exactly once', async () => {
    const answer = await upload(service, 'resource=donors&dry_run=true', donorsCsv);
    expect(answer.status).toBe(202);
    expect(answer.headers.get('Location')).toBe(`/api/v1/imports/${answer.body.id}`);
    expect(answer.body).toMatchObject({
      object: 'import',
      status: 'queued',
      dry_run: true,
      rows_total: 4,
    });

    const validated = await settled(service, answer.body.id);
    expect(validated).toMatchObject({
      status: 'validated',
      rows_processed: 4,
      rows_succeeded: 2,
      rows_failed: 2,
    });
    expect(await service.count('donors')).toBe(0);
    expect(await rowErrors(service, answer.body.id)).toEqual([
      {
        object: 'import_row_error',
        row: 3,
        errors: [{ param: 'last_name', code: 'required', message: 'is required' }],
      },
      {
        object: 'import_row_error',
        row: 4,
        errors: [{ param: 'organization_name', code: 'required', message: 'is required' }],
      },
    ]);

    const commit = await service.call('POST', `/api/v1/imports/${answer.body.id}/commit`, {
      body: {},
      headers: { 'Idempotency-Key': `commit-${answer.body.id}` },
    });
    expect(commit.status).toBe(200);
    expect(commit.body).toMatchObject({ status: 'importing' });
    const completed = await settled(service, answer.body.id);
    expect(completed).toMatchObject({
      status: 'completed',
      rows_processed: 4,
      rows_succeeded: 2,
      rows_failed: 2,
    });

    const donors = await service.db.any(sql.unsafe`
      SELECT external_id, first_name, address, gives_anonymously FROM donors ORDER BY external_id`);
    expect(donors).toEqual([
      {
        external_id: 'A-1',
        first_name: 'Ada',
        address: { city: 'London', country: 'GB' },
        gives_anonymously: true,
      },
      {
        external_id: 'A-4',
        first_name: null,
        address: { city: 'Arlington', country: 'US' },
        gives_anonymously: false,
      },
    ]);
    const events = await service.db.any(sql.unsafe`
      SELECT type, count(*)::int AS count FROM events GROUP BY type ORDER BY type`);
    expect(events).toEqual(
      expect.arrayContaining([
        { type: 'donor.created', count: 2 },
        { type: 'import.completed', count: 1 },
        { type: 'import.committed', count: 1 },
        { type: 'import.created', count: 1 },
      ]),
    );
    const listed = await service.call<{ data: { id: number }[] }>(
      'GET',
      '/api/v1/donors?external_id=A-4',
    );
    expect(listed.body.data).toHaveLength(1);
  });
});

describe('a gifts CSV with designations and donors named by external id or email', () => {
  test('each gift finds its donor and its funds by code', async () => {
    const donor = await created<{ id: number }>(
      service.call('POST', '/api/v1/donors', {
        body: {
          role: 'Individual',
          first_name: 'Mary',
          last_name: 'Somerville',
          email: 'mary@example.org',
          external_id: 'M-1',
        },
      }),
    );
    const csv = [
      'donor_external_id,donor_email,donor_id,amount,gift_date,subject,designations',
      `M-1,,,100.00,2026-01-05,Annual fund,GEN:60;ATH:40`,
      `,MARY@example.org,,50,2026-01-06,Spring appeal,GEN:50`,
      `,,${donor.id},25.5,2026-01-07,Direct,`,
      `M-404,,,10,2026-01-08,Nobody,GEN:10`,
      `M-1,,,10,2026-01-09,Unknown fund,XYZ:10`,
    ].join('\n');
    const answer = await upload(
      service,
      'resource=gifts&expected_rows=5&expected_amount=195.50',
      csv,
    );
    expect(answer.status).toBe(202);
    expect(answer.body.amount_total).toBe(195.5);
    const done = await settled(service, answer.body.id);
    expect(done).toMatchObject({ status: 'completed', rows_succeeded: 3, rows_failed: 2 });
    const gifts = await service.db.any(sql.type(giftRow)`
      SELECT donor_id, amount::text, designations FROM gifts ORDER BY id`);
    expect(gifts.map((gift) => gift.donor_id)).toEqual([donor.id, donor.id, donor.id]);
    expect(gifts[0]!.designations).toHaveLength(2);
    expect(await rowErrors(service, answer.body.id)).toEqual([
      {
        object: 'import_row_error',
        row: 5,
        errors: [
          {
            param: 'donor_external_id',
            code: 'reference_not_found',
            message: 'does not name an existing donor',
          },
        ],
      },
      {
        object: 'import_row_error',
        row: 6,
        errors: [
          {
            param: 'designations.0.fund_code',
            code: 'reference_not_found',
            message: 'does not name an existing fund',
          },
        ],
      },
    ]);
    expect(fundId).toBeGreaterThan(0);
    const csvErrors = await getText(service, `/api/v1/imports/${answer.body.id}/errors.csv`);
    expect(csvErrors.status).toBe(200);
    expect(csvErrors.text.split('\r\n')[0]).toBe(
      'donor_external_id,donor_email,donor_id,amount,gift_date,subject,designations,errors',
    );
  });
});
