// Gift imports take the fundraising columns (fundraising.md §2–4): a row's currency and
// exchange_rate (or the rate on file for its date), a tribute flattened into `tribute.*`
// columns, and its campaign and appeal named by code. Each row is judged by POST /gifts's own
// rules; a control total adds the file's amounts as written, whatever their currency.
import { sql } from 'slonik';
import { z } from 'zod';
import { prepareChunk } from '../common/imports/rows.js';
import { findFile, findImport } from '../common/imports/queries.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { getText, rowErrors, settled, upload } from './helpers/imports.js';
import { created } from './helpers/responses.js';

let service: TestService;
let other: Tenant;
let donorId: number;
let otherDonorId: number;

const post = (path: string, body: Record<string, unknown>, key?: string) =>
  created<{ id: number }>(service.call('POST', `/api/v1${path}`, { key, body }));

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: '2026-06-01', IMPORT_CHUNK_ROWS: '3' });
  other = await service.createTenant('Other College', 'USD');
  donorId = (
    await post('/donors', {
      role: 'Individual',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.org',
      external_id: 'A-1',
    })
  ).id;
  otherDonorId = (
    await post(
      '/donors',
      { role: 'Individual', first_name: 'Not', last_name: 'Ours', email: 'not@example.org' },
      other.key,
    )
  ).id;
  await post('/funds', { name: 'General', code: 'GEN', restriction: 'unrestricted' });
  await post('/funds', { name: 'Athletics', code: 'ATH', restriction: 'unrestricted' });
  // EUR has a rate from March on; CAD has none at all.
  await post('/exchange-rates', { currency: 'EUR', rate: 1.08, effective_on: '2026-03-01' });
  await post('/exchange-rates', { currency: 'EUR', rate: 1.1234, effective_on: '2026-04-01' });
}, 60_000);

afterAll(async () => {
  await service?.close();
});

interface StoredGift {
  subject: string;
  amount: string;
  currency: string;
  exchange_rate: string | null;
  base_amount: string | null;
  designations: { fund_id: number; amount: number; base_amount: number }[];
}

const giftsOf = (subjectLike: string) =>
  service.db.any(sql.unsafe`
    SELECT subject, amount::text, currency, exchange_rate::text, base_amount::text, designations
    FROM gifts WHERE institution_id = ${service.tenant.institutionId} AND subject LIKE ${subjectLike}
    ORDER BY gift_date, subject COLLATE "C"`) as Promise<readonly StoredGift[]>;

describe('currency and exchange_rate columns', () => {
  const csv = [
    'donor_external_id,amount,currency,exchange_rate,gift_date,subject,designations',
    // The base currency: rate 1.
    'A-1,100,USD,,2026-05-01,Rate base,GEN:100',
    // A rate sent with the row wins over the rate on file.
    'A-1,200,EUR,1.25,2026-05-02,Rate sent,GEN:100;ATH:100',
    // No rate sent: the latest on or before the gift's date (1.1234 from April 1).
    'A-1,33.33,EUR,,2026-05-03,Rate on file,GEN:11.11;ATH:22.22',
    // Before any EUR rate, and none sent.
    'A-1,50,EUR,,2026-02-01,Rate missing,GEN:50',
    // CAD has no rate on file at all.
    'A-1,70,CAD,,2026-05-04,Rate missing CAD,GEN:70',
    // A rate may not be sent with the base currency.
    'A-1,10,USD,2,2026-05-05,Rate not allowed,GEN:10',
  ].join('\n');

  test('each row converts as POST /gifts does; a row without a rate is an error on `currency`', async () => {
    const answer = await upload(service, 'resource=gifts', csv);
    expect(answer.status).toBe(202);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 3,
      rows_failed: 3,
    });
    const errors = await rowErrors(service, answer.body.id);
    expect(errors).toEqual([
      {
        object: 'import_row_error',
        row: 5,
        errors: [expect.objectContaining({ param: 'currency', code: 'exchange_rate_missing' })],
      },
      {
        object: 'import_row_error',
        row: 6,
        errors: [expect.objectContaining({ param: 'currency', code: 'exchange_rate_missing' })],
      },
      {
        object: 'import_row_error',
        row: 7,
        errors: [expect.objectContaining({ param: 'exchange_rate', code: 'not_allowed' })],
      },
    ]);

    const stored = await giftsOf('Rate%');
    expect(
      stored.map(({ subject, amount, currency, exchange_rate, base_amount }) => ({
        subject,
        amount,
        currency,
        exchange_rate,
        base_amount,
      })),
    ).toEqual([
      {
        subject: 'Rate base',
        amount: '100.00',
        currency: 'USD',
        exchange_rate: '1.000000',
        base_amount: '100.00',
      },
      {
        subject: 'Rate sent',
        amount: '200.00',
        currency: 'EUR',
        exchange_rate: '1.250000',
        base_amount: '250.00',
      },
      {
        subject: 'Rate on file',
        amount: '33.33',
        currency: 'EUR',
        exchange_rate: '1.123400',
        // 33.33 × 1.1234 = 37.442922
        base_amount: '37.44',
      },
    ]);
    // Designations are apportioned: each floored, the remainder on the last part.
    expect(stored[1]!.designations.map((part) => part.base_amount)).toEqual([125, 125]);
    // 11.11 × 1.1234 = 12.481… → 12.48; the last part takes 37.44 − 12.48.
    expect(stored[2]!.designations.map((part) => part.base_amount)).toEqual([12.48, 24.96]);

    const events = await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM events
      WHERE institution_id = ${service.tenant.institutionId} AND type = 'gift.created'
        AND data->>'subject' LIKE 'Rate%'`);
    expect(events).toBe(3);
  });

  test('expected_amount adds the amounts as written, whatever their currency', async () => {
    const mixed = [
      'donor_id,amount,currency,exchange_rate,gift_date,subject',
      `${donorId},100,USD,,2026-05-01,Control USD`,
      `${donorId},100,EUR,1.5,2026-05-01,Control EUR`,
      `${donorId},0.55,EUR,,2026-05-01,Control EUR on file`,
    ].join('\n');
    // The base amounts would add up to 100 + 150 + 0.62: not the control total.
    const converted = await upload(service, 'resource=gifts&expected_amount=250.62', mixed);
    expect(converted.status).toBe(202);
    expect(await settled(service, converted.body.id)).toMatchObject({
      status: 'failed',
      amount_total: 200.55,
      failure: {
        code: 'control_total_mismatch',
        message: "expected_amount is 250.62 but the rows' amounts add up to 200.55.",
      },
    });
    expect(await giftsOf('Control%')).toEqual([]);

    const asWritten = await upload(service, 'resource=gifts&expected_amount=200.55', mixed);
    expect(await settled(service, asWritten.body.id)).toMatchObject({
      status: 'completed',
      amount_total: 200.55,
      rows_succeeded: 3,
    });
    const stored = await giftsOf('Control%');
    expect(stored.map((gift) => [gift.currency, gift.base_amount])).toEqual([
      ['EUR', '150.00'],
      // 0.55 × 1.1234 = 0.61787 → 0.62
      ['EUR', '0.62'],
      ['USD', '100.00'],
    ]);
  });
});

describe('tribute columns', () => {
  const header = [
    'donor_id',
    'amount',
    'gift_date',
    'subject',
    'tribute.type',
    'tribute.honoree_name',
    'tribute.honoree_donor_id',
    'tribute.notify.name',
    'tribute.notify.email',
    'tribute.notify.address.line1',
    'tribute.notify.address.city',
    'tribute.notify.address.country',
    'tribute.message',
  ].join(',');

  test('the flat columns become the nested tribute of POST /gifts', async () => {
    const honoree = await post('/donors', {
      role: 'Individual',
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@example.org',
    });
    const csv = [
      header,
      `${donorId},50,2026-05-01,Tribute memory,in_memory_of,Grace Hopper,${honoree.id},Family Hopper,family@example.org,,,,"In loving memory, always"`,
      `${donorId},20,2026-05-02,Tribute honour,in_honor_of,Mr. Babbage,,Charles Babbage,,1 Analytical Way,London,GB,`,
      `${donorId},10,2026-05-03,Tribute none,,,,,,,,,`,
      `${donorId},5,2026-05-04,Tribute no notify,in_honor_of,Coach Reed,,,,,,,`,
    ].join('\n');
    const answer = await upload(service, 'resource=gifts', csv);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 4,
      rows_failed: 0,
    });
    const stored = await service.db.any(sql.unsafe`
      SELECT subject, tribute, tribute_honoree_donor_id, tribute_acknowledgement
      FROM gifts WHERE institution_id = ${service.tenant.institutionId}
        AND subject LIKE 'Tribute%' ORDER BY subject COLLATE "C"`);
    expect(stored).toEqual([
      {
        subject: 'Tribute honour',
        tribute: {
          type: 'in_honor_of',
          honoree_name: 'Mr. Babbage',
          notify: {
            name: 'Charles Babbage',
            email: null,
            address: expect.objectContaining({
              line1: '1 Analytical Way',
              city: 'London',
              country: 'GB',
            }),
          },
          message: null,
        },
        tribute_honoree_donor_id: null,
        tribute_acknowledgement: 'pending',
      },
      {
        subject: 'Tribute memory',
        tribute: {
          type: 'in_memory_of',
          honoree_name: 'Grace Hopper',
          notify: { name: 'Family Hopper', email: 'family@example.org', address: null },
          message: 'In loving memory, always',
        },
        tribute_honoree_donor_id: honoree.id,
        tribute_acknowledgement: 'pending',
      },
      {
        subject: 'Tribute no notify',
        tribute: {
          type: 'in_honor_of',
          honoree_name: 'Coach Reed',
          notify: null,
          message: null,
        },
        tribute_honoree_donor_id: null,
        tribute_acknowledgement: 'not_required',
      },
      {
        subject: 'Tribute none',
        tribute: null,
        tribute_honoree_donor_id: null,
        tribute_acknowledgement: null,
      },
    ]);
    // As GET /gifts?tribute_acknowledgement=pending lists them.
    const pending = await service.call<{ data: { subject: string }[] }>(
      'GET',
      '/api/v1/gifts?tribute_acknowledgement=pending',
    );
    expect(pending.body.data.map((gift) => gift.subject).sort()).toEqual([
      'Tribute honour',
      'Tribute memory',
    ]);
  });

  test('a bad tribute row is reported on the column it came from, in the errors list and errors.csv', async () => {
    const rows = [
      `${donorId},50,2026-05-01,Bad type,in_praise_of,Grace,,,,,,,`,
      `${donorId},50,2026-05-01,Bad email,in_memory_of,Grace,,Family,not-an-email,,,,`,
      `${donorId},50,2026-05-01,Foreign honoree,in_memory_of,Grace,${otherDonorId},,,,,,`,
      `${donorId},50,2026-05-01,Nowhere to send,in_memory_of,Grace,,Family,,,,,`,
      `${donorId},50,2026-05-01,No first line,in_memory_of,Grace,,Family,,,London,GB,`,
      `${donorId},50,2026-05-01,No honoree,,,,Family,family@example.org,,,,`,
    ];
    const answer = await upload(service, 'resource=gifts', [header, ...rows].join('\n'));
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 0,
      rows_failed: 6,
    });
    const errors = await rowErrors(service, answer.body.id);
    const asParams = errors.map((row) => ({
      row: row.row,
      problems: row.errors.map((error) => `${error.param}:${error.code}`),
    }));
    expect(asParams).toEqual([
      { row: 2, problems: ['tribute.type:invalid_value'] },
      { row: 3, problems: ['tribute.notify.email:invalid_format'] },
      { row: 4, problems: ['tribute.honoree_donor_id:reference_not_found'] },
      { row: 5, problems: ['tribute.notify:required'] },
      { row: 6, problems: ['tribute.notify.address.line1:required'] },
      { row: 7, problems: ['tribute.type:invalid_value', 'tribute.honoree_name:required'] },
    ]);
    // Every param but the whole `notify` is a column of the file.
    for (const row of errors)
      for (const error of row.errors)
        if (error.param !== 'tribute.notify') expect(header.split(',')).toContain(error.param);
    expect(
      await service.db.oneFirst(sql.unsafe`
        SELECT count(*)::int FROM gifts WHERE institution_id = ${service.tenant.institutionId}
          AND subject IN ('Bad type', 'Bad email', 'Foreign honoree', 'Nowhere to send',
                          'No first line', 'No honoree')`),
    ).toBe(0);

    const download = await getText(service, `/api/v1/imports/${answer.body.id}/errors.csv`);
    expect(download.status).toBe(200);
    const lines = download.text.split('\r\n');
    expect(lines[0]).toBe(`${header},errors`);
    expect(lines[2]).toBe(
      `${rows[1]},tribute.notify.email: ${errors[1]!.errors[0]!.message} (invalid_format)`,
    );
    expect(lines[3]).toBe(
      `${rows[2]},tribute.honoree_donor_id: does not name an existing donor (reference_not_found)`,
    );
  });

  test('the template offers the tribute columns, the notify address flattened as a donor address', async () => {
    const template = await getText(service, '/api/v1/imports/templates/gifts.csv');
    const columns = template.text.trim().split(',');
    expect(columns).toEqual(
      expect.arrayContaining([
        'currency',
        'exchange_rate',
        'tribute.type',
        'tribute.honoree_name',
        'tribute.honoree_donor_id',
        'tribute.notify.name',
        'tribute.notify.email',
        'tribute.notify.address.line1',
        'tribute.notify.address.postal_code',
        'tribute.notify.address.country',
        'tribute.message',
        'campaign_code',
        'appeal_code',
      ]),
    );
    expect(columns).not.toContain('tribute');
    expect(columns).not.toContain('tribute.notify');
  });
});

const chunkRow = z.object({ first_row: z.number(), rows: z.array(z.json()) });

describe('campaign_code and appeal_code', () => {
  let campaignId: number;
  let appealId: number;

  beforeAll(async () => {
    campaignId = (await post('/campaigns', { name: 'Annual Fund', code: 'Annual-26' })).id;
    appealId = (await post('/appeals', { name: 'Spring letter', code: 'SPRING', channel: 'mail' }))
      .id;
    // Another institution's codes are as absent as codes that do not exist.
    await post('/campaigns', { name: 'Theirs', code: 'THEIRS' }, other.key);
  });

  test('an unknown code is a row error on its column, and the row is not written', async () => {
    const csv = [
      'donor_id,amount,gift_date,subject,fund_id,campaign_code,appeal_code',
      `${donorId},10,2026-05-01,Coded unknown,,NOPE,NOPE`,
      `${donorId},10,2026-05-01,Coded foreign,,THEIRS,`,
      `${donorId},10,2026-05-01,Coded appeal unknown,,,NOPE`,
    ].join('\n');
    const answer = await upload(service, 'resource=gifts&dry_run=true', csv);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'validated',
      rows_failed: 3,
    });
    expect(await rowErrors(service, answer.body.id)).toEqual([
      {
        object: 'import_row_error',
        row: 2,
        errors: [
          {
            param: 'campaign_code',
            code: 'reference_not_found',
            message: 'does not name an existing campaign',
          },
          {
            param: 'appeal_code',
            code: 'reference_not_found',
            message: 'does not name an existing appeal',
          },
        ],
      },
      {
        object: 'import_row_error',
        row: 3,
        errors: [
          {
            param: 'campaign_code',
            code: 'reference_not_found',
            message: 'does not name an existing campaign',
          },
        ],
      },
      {
        object: 'import_row_error',
        row: 4,
        errors: [
          {
            param: 'appeal_code',
            code: 'reference_not_found',
            message: 'does not name an existing appeal',
          },
        ],
      },
    ]);
    expect(
      await service.db.oneFirst(sql.unsafe`
        SELECT count(*)::int FROM gifts WHERE subject LIKE 'Coded%'`),
    ).toBe(0);
  });

  test('a JSON row that names its campaign by id and by code is refused on the code', async () => {
    const answer = await upload(service, 'resource=gifts&dry_run=true', {
      rows: [
        {
          donor_id: donorId,
          amount: 10,
          gift_date: '2026-05-01',
          subject: 'Coded twice',
          campaign_id: campaignId,
          campaign_code: 'ANNUAL-26',
        },
      ],
    });
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'validated',
      rows_failed: 1,
    });
    expect(await rowErrors(service, answer.body.id)).toEqual([
      {
        object: 'import_row_error',
        row: 2,
        errors: [
          {
            param: 'campaign_code',
            code: 'not_allowed',
            message: 'name the campaign once: by campaign_id or campaign_code',
          },
        ],
      },
    ]);
  });

  test('codes resolve, whatever their case, to campaign_id and appeal_id in the row’s body, one query per kind for a chunk', async () => {
    const csv = [
      'donor_id,amount,gift_date,subject,campaign_code,appeal_code',
      `${donorId},10,2026-05-01,Resolved,annual-26,spring`,
      `${donorId},10,2026-05-01,Resolved,ANNUAL-26,`,
      `${donorId},10,2026-05-01,Resolved,,Spring`,
    ].join('\n');
    const answer = await upload(service, 'resource=gifts&dry_run=true', csv);
    await settled(service, answer.body.id);
    const prepared = await service.db.transaction(async (db) => {
      const imp = (await findImport(db, service.tenant.institutionId, answer.body.id))!;
      const file = (await findFile(db, service.tenant.institutionId, imp.file_id))!;
      const chunk = await db.one(sql.type(chunkRow)`
        SELECT first_row, rows FROM import_chunks
        WHERE institution_id = ${imp.institution_id} AND file_id = ${imp.file_id} AND chunk = 0`);
      const statements: string[] = [];
      const counting = new Proxy(db, {
        get(target, name, receiver) {
          const member: unknown = Reflect.get(target, name, receiver);
          if (name !== 'any' || typeof member !== 'function') return member;
          return (query: { sql: string }) => {
            statements.push(query.sql);
            return (member as (query: unknown) => unknown).call(target, query);
          };
        },
      });
      const rows = await prepareChunk(counting, imp, file, chunk.rows, chunk.first_row);
      return { rows, statements };
    });
    expect(prepared.rows.map((row) => ({ body: row.body, found: row.found }))).toEqual([
      {
        body: expect.objectContaining({ campaign_id: campaignId, appeal_id: appealId }),
        found: [],
      },
      { body: expect.objectContaining({ campaign_id: campaignId }), found: [] },
      { body: expect.objectContaining({ appeal_id: appealId }), found: [] },
    ]);
    expect(prepared.rows[1]!.body).not.toHaveProperty('appeal_id');
    expect(prepared.rows[2]!.body).not.toHaveProperty('campaign_id');
    for (const row of prepared.rows) {
      expect(row.body).not.toHaveProperty('campaign_code');
      expect(row.body).not.toHaveProperty('appeal_code');
    }
    expect(prepared.statements.filter((text) => text.includes('FROM "campaigns"'))).toHaveLength(1);
    expect(prepared.statements.filter((text) => text.includes('FROM "appeals"'))).toHaveLength(1);
  });
});

describe('a coded import, end to end', () => {
  interface Progress {
    raised: number;
    gift_count: number;
    donor_count: number;
    by_appeal: { appeal_id: number | null; raised: number }[];
    by_fund: { fund_id: number | null; raised: number }[];
  }
  interface ListedGift {
    subject: string;
    currency: string;
    base_amount: number;
    campaign_id: number | null;
    appeal_id: number | null;
  }

  test('rows coded by code, in any case and currency, post gifts that progress counts; a mismatched appeal or a closed campaign fails its row on its column', async () => {
    const capital = (await post('/campaigns', { name: 'Capital', code: 'Capital-26' })).id;
    const gala = (
      await post('/appeals', { name: 'Gala', code: 'GALA', channel: 'event', campaign_id: capital })
    ).id;
    const annual = (await post('/campaigns', { name: 'Annual', code: 'ANNUAL-E2E' })).id;
    await post('/appeals', { name: 'Phone', code: 'PHONE', channel: 'phone', campaign_id: annual });
    await post('/campaigns', { name: 'Old', code: 'OLD-25', status: 'closed' });
    const [general, athletics] = await Promise.all(
      ['GEN', 'ATH'].map((code) =>
        service.db.oneFirst(sql.unsafe`
          SELECT id FROM funds
          WHERE institution_id = ${service.tenant.institutionId} AND code = ${code}`),
      ),
    );

    const csv = [
      'donor_id,amount,currency,exchange_rate,gift_date,subject,designations,campaign_code,appeal_code',
      `${donorId},100,USD,,2026-05-01,E2E base,GEN:100,capital-26,gala`,
      `${donorId},200,EUR,1.25,2026-05-02,E2E sent rate,GEN:50;ATH:150,CAPITAL-26,`,
      // The appeal alone codes the line to its campaign; 30 × 1.1234 = 33.702 → 33.70.
      `${donorId},30,EUR,,2026-05-03,E2E rate on file,ATH:30,,Gala`,
      `${donorId},10,USD,,2026-05-04,E2E other appeal,GEN:10,Capital-26,phone`,
      `${donorId},10,USD,,2026-05-04,E2E closed,GEN:10,old-25,`,
    ].join('\n');
    const answer = await upload(service, 'resource=gifts', csv);
    expect(answer.status).toBe(202);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 3,
      rows_failed: 2,
    });
    expect(await rowErrors(service, answer.body.id)).toEqual([
      {
        object: 'import_row_error',
        row: 5,
        errors: [expect.objectContaining({ param: 'appeal_code', code: 'invalid_value' })],
      },
      {
        object: 'import_row_error',
        row: 6,
        errors: [expect.objectContaining({ param: 'campaign_code', code: 'reference_inactive' })],
      },
    ]);

    const listed = await service.call<{ data: ListedGift[] }>(
      'GET',
      `/api/v1/gifts?campaign_id=${capital}`,
    );
    expect(listed.status).toBe(200);
    expect(
      listed.body.data
        .map(({ subject, currency, base_amount, campaign_id, appeal_id }) => ({
          subject,
          currency,
          base_amount,
          campaign_id,
          appeal_id,
        }))
        .sort((a, b) => a.subject.localeCompare(b.subject)),
    ).toEqual([
      {
        subject: 'E2E base',
        currency: 'USD',
        base_amount: 100,
        campaign_id: capital,
        appeal_id: gala,
      },
      {
        subject: 'E2E rate on file',
        currency: 'EUR',
        base_amount: 33.7,
        campaign_id: null,
        appeal_id: gala,
      },
      {
        subject: 'E2E sent rate',
        currency: 'EUR',
        base_amount: 250,
        campaign_id: capital,
        appeal_id: null,
      },
    ]);
    const byAppeal = await service.call<{ data: ListedGift[] }>(
      'GET',
      `/api/v1/gifts?appeal_id=${gala}`,
    );
    expect(byAppeal.body.data.map((gift) => gift.subject).sort()).toEqual([
      'E2E base',
      'E2E rate on file',
    ]);

    const progress = await service.call<Progress>('GET', `/api/v1/campaigns/${capital}/progress`);
    expect(progress.status).toBe(200);
    expect(progress.body).toMatchObject({ raised: 383.7, gift_count: 3, donor_count: 1 });
    const byId = <T extends { raised: number }>(rows: T[], key: (row: T) => number | null) =>
      Object.fromEntries(rows.map((row) => [String(key(row)), row.raised]));
    expect(byId(progress.body.by_appeal, (row) => row.appeal_id)).toEqual({
      [gala]: 133.7,
      null: 250,
    });
    // GEN 100 + 62.50; ATH 187.50 + 33.70.
    expect(byId(progress.body.by_fund, (row) => row.fund_id)).toEqual({
      [String(general)]: 162.5,
      [String(athletics)]: 221.2,
    });
    // gift_lines, which progress sums, agrees.
    const lines = await service.db.one(sql.unsafe`
      SELECT sum(base_net)::text AS raised, count(DISTINCT gift_id)::int AS gifts
      FROM gift_lines
      WHERE institution_id = ${service.tenant.institutionId} AND campaign_id = ${capital}
        AND counted`);
    expect(lines).toEqual({ raised: '383.70', gifts: 3 });
    expect(
      await service.db.oneFirst(sql.unsafe`
        SELECT count(*)::int FROM gifts WHERE institution_id = ${service.tenant.institutionId}
          AND subject IN ('E2E other appeal', 'E2E closed')`),
    ).toBe(0);
  });
});
