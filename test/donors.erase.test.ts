// Erasing a donor (constituents.md §6): names "Erased", contact points and free text gone, the
// donors merged into it too, and every stored copy that names it (events, idempotency answers,
// import rows and errors.csv); receipts keep their frozen name; the money stays in every total;
// the dry run answers exactly what the real call does; bad input changes nothing; an erased
// donor is a tombstone. And the retention sweep that bounds what erasure must reach in imports.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import { pruneImportFiles } from '../common/imports/retention.js';
import { type Body, type Donor, other, service, setUpDonorTests } from './helpers/donors.js';
import { getText, settled, upload } from './helpers/imports.js';
import { created } from './helpers/responses.js';
import { expectSameErrorThreeWays, expectSameFailureThreeWays } from './helpers/threeWays.js';

setUpDonorTests();

let fund: number;
let counter = 0;

const post = <T = { id: number }>(path: string, body: Body, key?: string) =>
  created<T & { id: number }>(
    service.call('POST', `/api/v1${path}`, {
      body,
      key,
      headers: { 'Idempotency-Key': randomUUID() },
    }),
  );

const donor = async (extra: Body = {}, key?: string) => {
  const n = ++counter;
  return (
    await post(
      '/donors',
      { role: 'Individual', first_name: 'Pat', last_name: `Plain ${n}`, ...extra },
      key,
    )
  ).id;
};

const gift = (donorId: number, amount: number, extra: Body = {}) =>
  post('/gifts', {
    donor_id: donorId,
    amount,
    subject: 'Annual fund',
    gift_date: '2026-05-01',
    fund_id: fund,
    ...extra,
  });

const erase = (id: number, body: Body = { reason: 'Erasure request 42' }, query = '') =>
  service.call<Donor & { giving: Record<string, number> }>(
    'POST',
    `/api/v1/donors/${id}/erase${query}`,
    { body, headers: { 'Idempotency-Key': randomUUID() } },
  );

const code = (response: { body: unknown }) =>
  (response.body as { error: { code: string } }).error.code;

/** Every row of every table, as text: what "nothing changed" and "nothing left" look at. */
async function everyRow(except: string[] = []): Promise<Record<string, string[]>> {
  const tables = await service.db.anyFirst(sql.type(z.object({ table_name: z.string() }))`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'pgmigrations'
    ORDER BY table_name`);
  const out: Record<string, string[]> = {};
  for (const table of tables.filter((name) => !except.includes(name)))
    out[table] = [
      ...(await service.db.anyFirst(sql.type(z.object({ row: z.string() }))`
        SELECT t::text AS row FROM ${sql.identifier([table])} t ORDER BY 1`)),
    ];
  return out;
}

/** The tables and rows whose text holds any of `needles` (case-insensitive). */
async function holding(needles: string[], except: string[] = []) {
  const found: string[] = [];
  for (const [table, rows] of Object.entries(await everyRow(except)))
    for (const row of rows)
      if (needles.some((needle) => row.toLowerCase().includes(needle.toLowerCase())))
        found.push(`${table}: ${row.slice(0, 300)}`);
  return found;
}

// The webhook dispatcher's cursor moves with every event of any test: not this test's to judge.
// The audit log records the dry run itself (trust.md §3), a second or so later.
const snapshot = () => everyRow(['write_receipts', 'webhook_dispatch_cursor', 'audit_events']);

beforeAll(async () => {
  fund = (await post('/funds', { name: 'General', code: 'GEN' })).id;
});

describe('POST /donors/{id}/erase', () => {
  test('erases the person everywhere, the dry run answers the same and writes nothing; receipts keep their frozen name; totals stay', async () => {
    const household = (await post('/donors', { role: 'Household', last_name: 'Family H' })).id;
    const friend = await donor({ first_name: 'Otto', last_name: 'Other' });
    const zelda = await donor({
      first_name: 'Zelda',
      last_name: 'Quillfeather',
      email: 'zelda.q@example.org',
      external_id: 'ZQ-1',
      phone: '+1 555 014 2000',
      address: { line1: '7 Quill Lane', city: 'Inkwell', postal_code: 'QF1', country: 'GB' },
      emails: [{ address: 'zq.work@example.org', type: 'work' }],
      phones: [{ number: '+1 555 014 2001', type: 'mobile' }],
      addresses: [{ line1: '9 Feather Row', city: 'Inkwell', country: 'GB', type: 'home' }],
      household_id: household,
      communication_restrictions: ['do_not_call'],
    });
    // An earlier record of the same person, merged into her: erasure reaches it too.
    const earlier = await donor({
      first_name: 'Zelda',
      last_name: 'Quillfeather-Old',
      email: 'zq.old@example.org',
      external_id: 'ZQ-OLD',
    });
    expect(
      (
        await service.call('POST', `/api/v1/donors/${zelda}/merge`, {
          body: { source_id: earlier },
        })
      ).status,
    ).toBe(200);
    const own = await gift(zelda, 100);
    const receipt = await post<{ donor_name: string; number: number }>('/receipts', {
      gift_id: own.id,
    });
    expect(receipt.donor_name).toContain('Quillfeather');
    await gift(friend, 50, {
      soft_credits: [{ donor_id: zelda, amount: 50, reason: 'household' }],
    });
    const tribute = await gift(friend, 30, {
      tribute: {
        type: 'in_honor_of',
        honoree_name: 'Zelda Quillfeather',
        honoree_donor_id: zelda,
      },
    });
    await post('/relationships', {
      donor_id: zelda,
      related_donor_id: friend,
      type: 'sibling_of',
      note: 'Zelda Quillfeather’s brother',
    });
    await post(`/donors/${zelda}/consents`, {
      channel: 'email',
      response: 'opt_in',
      source: 'web_form',
      statement: 'I, Zelda Quillfeather, agree',
    });
    const pledge = await post('/pledges', {
      donor_id: zelda,
      amount: 40,
      pledge_date: '2026-01-01',
      fund_id: fund,
      note: 'Zelda Quillfeather promised at the gala',
      schedule: { frequency: 'one_time', installments: 1, first_due_on: '2026-02-01' },
    });
    const writeOff = await service.call('POST', `/api/v1/pledges/${pledge.id}/write-off`, {
      body: { reason: 'Moved abroad' },
      headers: { 'Idempotency-Key': randomUUID() },
    });
    expect(writeOff.status).toBe(200);
    const recurring = await post('/recurring-gifts', {
      donor_id: zelda,
      amount: 10,
      frequency: 'monthly',
      start_on: '2026-01-01',
      fund_id: fund,
    });
    expect(
      (
        await service.call('PATCH', `/api/v1/recurring-gifts/${recurring.id}`, {
          body: { status: 'cancelled' },
          headers: { 'Idempotency-Key': randomUUID() },
        })
      ).status,
    ).toBe(200);
    // A donor file naming her by email (a failing row, so errors.csv shows it) and by phone,
    // with another person's row that erasure leaves alone.
    const file = [
      'role,first_name,last_name,email,phone',
      'Individual,Zelda,,zelda.q@example.org,',
      'Individual,Norma,Namesake,norma@example.org,+1 555 014 2000',
      'Individual,Una,Unrelated,una@example.org,',
    ].join('\n');
    const imported = await upload(service, 'resource=donors&dry_run=true', file);
    expect(imported.status).toBe(202);
    await settled(service, imported.body.id);
    const errorsCsv = `/api/v1/imports/${imported.body.id}/errors.csv`;
    expect((await getText(service, errorsCsv)).text).toContain('Zelda');

    const personal = [
      'zelda',
      'quillfeather',
      'zq-1',
      'zq-old',
      'zq.work@',
      '555 014 2000',
      '555 014 2001',
      'quill lane',
      'feather row',
    ];
    const givingBefore = (await service.call<Donor>('GET', `/api/v1/donors/${zelda}`)).body.giving;
    const fundBefore = (await service.call('GET', `/api/v1/funds/${fund}`)).body;
    expect(await holding(personal)).not.toEqual([]);

    const before = await snapshot();
    const dry = await erase(zelda, { reason: 'Erasure request 42' }, '?dry_run=true');
    expect(dry.status).toBe(200);
    expect(await snapshot()).toEqual(before);

    const real = await erase(zelda);
    expect(real.status).toBe(200);
    const { updated_at: _dryAt, ...dryRest } = dry.body;
    const { updated_at: _realAt, ...realRest } = real.body;
    expect(dryRest).toEqual(realRest);
    expect(real.body).toMatchObject({
      id: zelda,
      status: 'erased',
      first_name: 'Erased',
      last_name: 'Erased',
      display_name: expect.not.stringContaining('Zelda'),
      email: null,
      phone: null,
      address: null,
      external_id: null,
      emails: [],
      phones: [],
      addresses: [],
      mailing_address: null,
      household_id: household,
      giving: givingBefore,
    });
    expect(await service.call<Donor>('GET', `/api/v1/donors/${zelda}`)).toMatchObject({
      status: 200,
      body: { status: 'erased', giving: givingBefore },
    });
    expect((await service.call('GET', `/api/v1/funds/${fund}`)).body).toEqual(fundBefore);

    // Nothing personal is left in any table, but in the receipt the law keeps.
    expect(await holding(personal, ['receipts'])).toEqual([]);
    const kept = await service.db.oneFirst(sql.unsafe`
      SELECT donor_name FROM receipts WHERE number = ${receipt.number}`);
    expect(kept).toBe(receipt.donor_name);
    expect(
      (
        await service.call<{ tribute: { honoree_name: string } }>(
          'GET',
          `/api/v1/gifts/${tribute.id}`,
        )
      ).body.tribute.honoree_name,
    ).toBe('Erased');
    // The other rows of the import file stay as sent; hers is empty.
    const csv = (await getText(service, errorsCsv)).text;
    expect(csv).not.toContain('Zelda');
    expect(
      await service.db.oneFirst(sql.unsafe`
        SELECT rows::text FROM import_chunks c JOIN imports i
          ON i.institution_id = c.institution_id AND i.file_id = c.file_id
        WHERE i.id = ${imported.body.id}`),
    ).toContain('una@example.org');

    // One donor.erased event, with the reason and no personal data.
    const events = await service.call<{ data: { type: string; data: { object: Body } }[] }>(
      'GET',
      `/api/v1/events?object_type=donor&object_id=${zelda}`,
    );
    const erased = events.body.data.filter((event) => event.type === 'donor.erased');
    expect(erased).toHaveLength(1);
    expect(erased[0]!.data.object).toMatchObject({
      id: zelda,
      status: 'erased',
      first_name: 'Erased',
      reason: 'Erasure request 42',
    });
  });

  test('bad input, real and dry: documented codes, nothing changed', async () => {
    const plain = await donor();
    const path = `/api/v1/donors/${plain}/erase`;
    const cases: [Body, { param: string; code: string }[]][] = [
      [{}, [{ param: 'reason', code: 'required' }]],
      [{ reason: '   ' }, [{ param: 'reason', code: 'required' }]],
      [{ reason: 7 }, [{ param: 'reason', code: 'invalid_type' }]],
      [{ reason: 'x'.repeat(501) }, [{ param: 'reason', code: 'too_long' }]],
      [{ reason: 'ok', forget: true }, [{ param: 'forget', code: 'unknown_field' }]],
    ];
    for (const [body, expected] of cases)
      await expectSameFailureThreeWays(service, path, 'POST', body, expected, snapshot);

    const notFound = { status: 404, code: 'resource_not_found' };
    const foreign = await donor({}, other.key);
    for (const id of [foreign, 999999999])
      await expectSameErrorThreeWays(
        service,
        `/api/v1/donors/${id}/erase`,
        'POST',
        { reason: 'r' },
        notFound,
        snapshot,
      );

    // Open commitments: an active recurring gift, an open pledge.
    const giving = await donor();
    await post('/recurring-gifts', {
      donor_id: giving,
      amount: 10,
      frequency: 'monthly',
      start_on: '2026-01-01',
      fund_id: fund,
    });
    const promising = await donor();
    await post('/pledges', {
      donor_id: promising,
      amount: 40,
      pledge_date: '2026-01-01',
      fund_id: fund,
      schedule: { frequency: 'one_time', installments: 1, first_due_on: '2026-02-01' },
    });
    for (const id of [giving, promising])
      await expectSameErrorThreeWays(
        service,
        `/api/v1/donors/${id}/erase`,
        'POST',
        { reason: 'r' },
        { status: 409, code: 'resource_in_use' },
        snapshot,
      );

    // Tombstones: a merged donor, an erased one.
    const merged = await donor();
    const survivor = await donor();
    expect(
      (
        await service.call('POST', `/api/v1/donors/${survivor}/merge`, {
          body: { source_id: merged },
        })
      ).status,
    ).toBe(200);
    const gone = await donor();
    expect((await erase(gone)).status).toBe(200);
    for (const id of [merged, gone])
      await expectSameErrorThreeWays(
        service,
        `/api/v1/donors/${id}/erase`,
        'POST',
        { reason: 'r' },
        { status: 409, code: 'donor_merged' },
        snapshot,
      );
  });

  test('an erased donor is a tombstone: out of lists, duplicates and donor reports; takes no write; nothing new names it', async () => {
    const a = await donor({ first_name: 'Twin', last_name: 'Match', phone: '555 0177' });
    const b = await donor({ first_name: 'Twin', last_name: 'Match', phone: '555 0177' });
    await gift(a, 25, { gift_date: '2025-05-01' });
    const pairs = async () =>
      (
        await service.call<{ data: { donor_id: number; other_donor_id: number }[] }>(
          'GET',
          '/api/v1/duplicates?limit=100',
        )
      ).body.data.filter((pair) => [pair.donor_id, pair.other_donor_id].includes(a));
    expect(await pairs()).toHaveLength(1);
    const lybunt = async () =>
      (
        await service.call<{ data: { donor_id: number }[] }>(
          'GET',
          '/api/v1/reports/lybunt?fiscal_year=2026&limit=100',
        )
      ).body.data.map((row) => row.donor_id);
    expect(await lybunt()).toContain(a);

    expect((await erase(a)).status).toBe(200);
    expect(await pairs()).toEqual([]);
    expect(await lybunt()).not.toContain(a);
    const listed = await service.call<{ data: Donor[] }>('GET', '/api/v1/donors?limit=100');
    expect(listed.body.data.map((row) => row.id)).not.toContain(a);
    expect(listed.body.data.map((row) => row.id)).toContain(b);
    const erasedList = await service.call<{ data: Donor[] }>('GET', '/api/v1/donors?status=erased');
    expect(erasedList.body.data.map((row) => row.id)).toContain(a);

    const patch = await service.call('PATCH', `/api/v1/donors/${a}`, { body: { phone: '1' } });
    expect([patch.status, code(patch)]).toEqual([409, 'donor_merged']);
    const del = await service.call('DELETE', `/api/v1/donors/${a}`);
    expect([del.status, code(del)]).toEqual([409, 'donor_merged']);
    const into = await service.call('POST', `/api/v1/donors/${a}/merge`, {
      body: { source_id: b },
    });
    expect([into.status, code(into)]).toEqual([409, 'donor_merged']);
    const from = await service.call<{ error: { errors: { param: string; code: string }[] } }>(
      'POST',
      `/api/v1/donors/${b}/merge`,
      { body: { source_id: a } },
    );
    expect(from.status).toBe(422);
    expect(from.body.error.errors).toContainEqual(
      expect.objectContaining({ param: 'source_id', code: 'invalid_value' }),
    );
    for (const [path, payload, param] of [
      ['/gifts', { donor_id: a, amount: 5, gift_date: '2026-05-02', subject: 'Late' }, 'donor_id'],
      ['/relationships', { donor_id: b, related_donor_id: a, type: 'other' }, 'related_donor_id'],
    ] as const) {
      const refused = await service.call<{ error: { errors: { param: string; code: string }[] } }>(
        'POST',
        `/api/v1${path}`,
        { body: payload, headers: { 'Idempotency-Key': randomUUID() } },
      );
      expect(refused.status).toBe(422);
      expect(refused.body.error.errors).toContainEqual(
        expect.objectContaining({ param, code: 'reference_inactive' }),
      );
    }
  });
});

describe('writes racing an erasure', () => {
  test('gifts naming the donor commit before it or are refused after it; none is lost or fails', async () => {
    const target = await donor();
    const writes = Array.from({ length: 12 }, (_, index) =>
      service.call('POST', '/api/v1/gifts', {
        body: {
          donor_id: target,
          amount: 10 + index,
          subject: 'Racing',
          gift_date: '2026-05-01',
          fund_id: fund,
        },
        headers: { 'Idempotency-Key': randomUUID() },
      }),
    );
    const answers = await Promise.all([...writes, erase(target)]);
    expect(answers.pop()!.status).toBe(200);
    for (const answer of answers) {
      expect([201, 422]).toContain(answer.status);
      if (answer.status === 422)
        expect(JSON.stringify(answer.body)).toContain('reference_inactive');
    }
    const committed = answers.filter((answer) => answer.status === 201).length;
    const stored = await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM gifts WHERE donor_id = ${target}`);
    expect(stored).toBe(committed);
  });
});

describe('IMPORT_FILE_RETENTION_DAYS', () => {
  test('the sweep empties import files older than the retention; newer ones stay', async () => {
    expect(service.config.IMPORT_FILE_RETENTION_DAYS).toBe(30);
    const file = (n: number) =>
      ['role,first_name,last_name,email', `Individual,Old,Row,old${n}@`].join('\n');
    const old = await upload(service, 'resource=donors&dry_run=true', file(1));
    const fresh = await upload(service, 'resource=donors&dry_run=true', file(2));
    for (const answer of [old, fresh]) await settled(service, answer.body.id);
    await service.db.query(sql.unsafe`
      UPDATE import_files SET created_at = now() - make_interval(days => 31)
      WHERE (institution_id, id) IN (SELECT institution_id, file_id FROM imports
                                     WHERE id = ${old.body.id})`);
    const stored = (id: number) =>
      service.db.one(sql.unsafe`
        SELECT (SELECT count(*)::int FROM import_chunks c
                WHERE c.institution_id = i.institution_id AND c.file_id = i.file_id) AS chunks,
               (SELECT count(*)::int FROM import_row_errors e
                WHERE e.institution_id = i.institution_id AND e.import_id = i.id) AS errors
        FROM imports i WHERE i.id = ${id}`);
    expect(await stored(old.body.id)).toEqual({ chunks: 1, errors: 1 });

    expect(await pruneImportFiles(service.db, 30)).toBe(1);
    expect(await stored(old.body.id)).toEqual({ chunks: 0, errors: 0 });
    expect(await stored(fresh.body.id)).toEqual({ chunks: 1, errors: 1 });
    // The import itself still answers, with its counts; its rows are gone.
    const answer = await service.call('GET', `/api/v1/imports/${old.body.id}`);
    expect(answer).toMatchObject({ status: 200, body: { rows_total: 1, rows_failed: 1 } });
    const errors = await service.call<{ data: unknown[] }>(
      'GET',
      `/api/v1/imports/${old.body.id}/errors`,
    );
    expect(errors.body.data).toEqual([]);
    expect(await pruneImportFiles(service.db, 30)).toBe(0);
  });
});
