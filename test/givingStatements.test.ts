// Giving statements (fundraising.md §6): issue, list, retrieve, re-issue, the counting rule, the
// bad input of issue 32, and numbers consecutive per institution and year under concurrency.
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import { expectSameFailureThreeWays } from './helpers/threeWays.js';

type Json = Record<string, unknown>;

interface Line {
  gift_id: number;
  gift_date: string;
  receipt_number: number | null;
  currency: string;
  amount: number;
  benefit_amount: number;
  deductible_amount: number;
}

interface Statement {
  id: number;
  object: 'giving_statement';
  number: string;
  donor_id: number;
  year: number;
  period: 'calendar' | 'fiscal';
  period_start: string;
  period_end: string;
  status: 'issued' | 'superseded';
  superseded_by_id: number | null;
  run_id: number | null;
  donor_name: string;
  donor_address: Record<string, string | null> | null;
  currency: string;
  lines: Line[];
  totals: { currency: string; amount: number; deductible_amount: number }[];
  base_total: number;
  issued_on: string;
  created_at: string;
  updated_at: string;
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

let service: TestService;
let counter = 0;

const address = {
  line1: '12 Rue de Rivoli',
  city: 'Paris',
  region: null,
  postal_code: '75001',
  country: 'FR',
};

/** A client of an institution of its own, so that its numbers start at 1. */
async function institution() {
  const tenant: Tenant = await service.createTenant(`Statement College ${++counter}`, 'USD');
  const call = <T = Json>(
    method: string,
    path: string,
    body?: Json,
    headers: Record<string, string> = {},
  ) => service.call<T>(method, `/api/v1${path}`, { key: tenant.key, body, headers });
  const donor = (body: Json = {}) =>
    created<{ id: number }>(
      call('POST', '/donors', {
        role: 'Individual',
        first_name: 'Zoë',
        last_name: 'Łukasiewicz',
        email: `donor${++counter}@example.org`,
        ...body,
      }),
    );
  const gift = (donorId: number, body: Json = {}) =>
    created<{ id: number }>(
      call('POST', '/gifts', {
        donor_id: donorId,
        amount: 100,
        subject: 'Annual fund',
        gift_date: '2025-03-01',
        ...body,
      }),
    );
  const issue = (body: Json, headers: Record<string, string> = {}) =>
    call<Statement>('POST', '/giving-statements', body, headers);
  const stored = () =>
    service.db.any(sql.unsafe`
      SELECT id, year, seq, donor_id, status, superseded_by_id FROM giving_statements
      WHERE institution_id = ${tenant.institutionId} ORDER BY id`);
  return { tenant, call, donor, gift, issue, stored };
}

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

describe('POST /giving-statements', () => {
  test('states the donor’s counted gifts of the year: lines net of refunds, deductible parts, totals per currency, base total, frozen name and address', async () => {
    const { call, donor, gift, issue } = await institution();
    const ada = await donor({ address });
    const other = await donor();
    const cash = await gift(ada.id, { amount: 250.5, benefit_amount: 40, gift_date: '2025-02-01' });
    const inKind = await gift(ada.id, { amount: 80, type: 'in_kind', gift_date: '2025-04-01' });
    const refunded = await gift(ada.id, { amount: 100, gift_date: '2025-05-01' });
    expect(
      (
        await call('POST', `/gifts/${refunded.id}/refunds`, {
          amount: 30,
          refund_date: '2025-05-02',
        })
      ).status,
    ).toBe(201);
    const euros = await gift(ada.id, {
      amount: 200,
      currency: 'EUR',
      exchange_rate: 1.1,
      gift_date: '2025-06-01',
    });
    // Not lines: a voided gift, a gift refunded in full, one of another year, and a gift of
    // another donor soft-credited to this one.
    const voided = await gift(ada.id, { gift_date: '2025-07-01' });
    expect((await call('POST', `/gifts/${voided.id}/void`, { reason: 'Bounced' })).status).toBe(
      200,
    );
    const gone = await gift(ada.id, { amount: 20, gift_date: '2025-07-02' });
    expect(
      (await call('POST', `/gifts/${gone.id}/refunds`, { amount: 20, refund_date: '2025-07-03' }))
        .status,
    ).toBe(201);
    await gift(ada.id, { gift_date: '2024-12-31' });
    await gift(ada.id, { gift_date: '2026-01-01' });
    await gift(other.id, {
      gift_date: '2025-08-01',
      soft_credits: [{ donor_id: ada.id, amount: 100, reason: 'household' }],
    });
    const receipt = await created<{ number: number }>(
      call('POST', '/receipts', { gift_id: cash.id }),
    );

    const response = await issue({ donor_id: ada.id, year: 2025 });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'giving_statement',
      number: '2025-1',
      donor_id: ada.id,
      year: 2025,
      period: 'calendar',
      period_start: '2025-01-01',
      period_end: '2025-12-31',
      status: 'issued',
      superseded_by_id: null,
      run_id: null,
      donor_name: 'Zoë Łukasiewicz',
      donor_address: { ...address, line2: null },
      currency: 'USD',
      lines: [
        {
          gift_id: cash.id,
          gift_date: '2025-02-01',
          receipt_number: receipt.number,
          currency: 'USD',
          amount: 250.5,
          benefit_amount: 40,
          deductible_amount: 210.5,
        },
        {
          gift_id: inKind.id,
          gift_date: '2025-04-01',
          receipt_number: null,
          currency: 'USD',
          amount: 80,
          benefit_amount: 0,
          deductible_amount: 0,
        },
        {
          gift_id: refunded.id,
          gift_date: '2025-05-01',
          receipt_number: null,
          currency: 'USD',
          amount: 70,
          benefit_amount: 0,
          deductible_amount: 70,
        },
        {
          gift_id: euros.id,
          gift_date: '2025-06-01',
          receipt_number: null,
          currency: 'EUR',
          amount: 200,
          benefit_amount: 0,
          deductible_amount: 200,
        },
      ],
      totals: [
        { currency: 'EUR', amount: 200, deductible_amount: 200 },
        { currency: 'USD', amount: 400.5, deductible_amount: 280.5 },
      ],
      // 250.50 + 80 + 70 + 200 × 1.1
      base_total: 620.5,
      issued_on: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(response.headers.get('Location')).toBe(`/api/v1/giving-statements/${response.body.id}`);
    expect((await call('GET', `/giving-statements/${response.body.id}`)).body).toEqual(
      response.body,
    );

    // One event, carrying the statement as answered.
    const events = await call<Page<{ type: string; data: { object: Json } }>>(
      'GET',
      `/events?object_type=giving_statement`,
    );
    expect(events.body.data.map((event) => event.type)).toEqual(['giving_statement.issued']);
    expect(events.body.data[0]!.data.object).toEqual(response.body);
  });

  test('a fiscal statement covers the institution’s fiscal year, named by the year it ends in', async () => {
    const { call, donor, gift, issue } = await institution();
    expect((await call('PATCH', '/institution', { fiscal_year_start_month: 7 })).status).toBe(200);
    const ada = await donor();
    const inside = await gift(ada.id, { gift_date: '2024-07-01' });
    const last = await gift(ada.id, { gift_date: '2025-06-30' });
    await gift(ada.id, { gift_date: '2025-07-01' });
    const response = await issue({ donor_id: ada.id, year: 2025, period: 'fiscal' });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      number: '2025-1',
      period: 'fiscal',
      period_start: '2024-07-01',
      period_end: '2025-06-30',
      base_total: 200,
    });
    expect(response.body.lines.map((line) => line.gift_id)).toEqual([inside.id, last.id]);
  });

  test('a dry run answers number "<year>-0" and id 0 and writes nothing; a retried key issues once', async () => {
    const { donor, gift, issue, stored } = await institution();
    const ada = await donor();
    await gift(ada.id);
    const dry = await issue({ donor_id: ada.id, year: 2025 }, { 'Dry-Run': 'true' });
    expect(dry.status).toBe(201);
    expect(dry.body).toMatchObject({ id: 0, number: '2025-0', base_total: 100, status: 'issued' });
    expect(dry.headers.get('Location')).toBeNull();
    expect(await stored()).toEqual([]);

    const key = { 'Idempotency-Key': `statement-${counter}` };
    const first = await issue({ donor_id: ada.id, year: 2025 }, key);
    const again = await issue({ donor_id: ada.id, year: 2025 }, key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(first.body.number).toBe('2025-1');
    expect(await stored()).toHaveLength(1);
  });

  test('a second statement supersedes the first; an issued statement keeps what it stated', async () => {
    const { call, donor, gift, issue } = await institution();
    const ada = await donor();
    const { id: giftId } = await gift(ada.id);
    const first = (await issue({ donor_id: ada.id, year: 2025 })).body;
    expect((await call('PATCH', `/gifts/${giftId}`, { amount: 150 })).status).toBe(200);
    expect((await call('PATCH', `/donors/${ada.id}`, { first_name: 'Ada' })).status).toBe(200);
    await gift(ada.id, { gift_date: '2025-09-01' });
    const second = await issue({ donor_id: ada.id, year: 2025 });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({
      number: '2025-2',
      status: 'issued',
      donor_name: 'Ada Łukasiewicz',
      base_total: 250,
    });

    const old = await call<Statement>('GET', `/giving-statements/${first.id}`);
    expect(old.body).toEqual({
      ...first,
      status: 'superseded',
      superseded_by_id: second.body.id,
      updated_at: expect.stringMatching(ISO_MS),
    });

    const issued = await call<Page<Statement>>(
      'GET',
      `/giving-statements?donor_id=${ada.id}&year=2025&status=issued`,
    );
    expect(issued.body.data.map((statement) => statement.id)).toEqual([second.body.id]);
    const all = await call<Page<Statement>>('GET', `/giving-statements?limit=1`);
    expect(all.body.data.map((statement) => statement.id)).toEqual([second.body.id]);
    expect(all.body.has_more).toBe(true);
    const next = await call<Page<Statement>>(
      'GET',
      `/giving-statements?limit=1&starting_after=${all.body.next_cursor}`,
    );
    expect(next.body.data.map((statement) => statement.id)).toEqual([first.id]);
    expect((await call<Page<Statement>>('GET', `/giving-statements?year=2024`)).body.data).toEqual(
      [],
    );
  });

  test('a donor with a statement stays on record: its delete is 409, even once its gifts are gone', async () => {
    const { call, donor, gift, issue } = await institution();
    const ada = await donor();
    const { id: giftId } = await gift(ada.id);
    expect((await issue({ donor_id: ada.id, year: 2025 })).status).toBe(201);
    expect((await call('DELETE', `/gifts/${giftId}`)).status).toBe(200);
    for (const path of [`/donors/${ada.id}?dry_run=true`, `/donors/${ada.id}`]) {
      const refused = await call<{ error: { code: string } }>('DELETE', path);
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('resource_in_use');
    }
    expect((await call('GET', `/donors/${ada.id}`)).status).toBe(200);
  });

  test('bad input is refused three ways alike, and nothing is written', async () => {
    const { tenant, donor, gift, stored } = await institution();
    const stranger = await institution();
    const ada = await donor();
    await gift(ada.id);
    const theirs = await stranger.donor();
    await stranger.gift(theirs.id);
    const empty = await donor();
    await gift(empty.id, { gift_date: '2024-06-01' });
    const snapshot = async () => ({
      mine: await stored(),
      theirs: await stranger.stored(),
      numbers: await service.count('giving_statement_numbers'),
    });
    const refuse = (body: Json, errors: { param: string; code: string }[]) =>
      expectSameFailureThreeWays(
        service,
        '/api/v1/giving-statements',
        'POST',
        body,
        errors,
        snapshot,
        {
          key: tenant.key,
        },
      );
    await refuse({ donor_id: theirs.id, year: 2025 }, [
      { param: 'donor_id', code: 'reference_not_found' },
    ]);
    await refuse({ donor_id: 999_999_999, year: 2025 }, [
      { param: 'donor_id', code: 'reference_not_found' },
    ]);
    await refuse({ donor_id: ada.id, year: 9998 }, [{ param: 'year', code: 'out_of_range' }]);
    await refuse({ donor_id: ada.id, year: 99 }, [{ param: 'year', code: 'out_of_range' }]);
    await refuse({ donor_id: ada.id, year: '2025' }, [{ param: 'year', code: 'invalid_type' }]);
    await refuse({ donor_id: ada.id, year: 2025, period: 'weekly' }, [
      { param: 'period', code: 'invalid_value' },
    ]);
    await refuse({ donor_id: empty.id, year: 2025 }, [
      { param: 'donor_id', code: 'nothing_counted' },
    ]);
    await refuse({}, [
      { param: 'donor_id', code: 'required' },
      { param: 'year', code: 'required' },
    ]);
    await refuse({ donor_id: ada.id, year: 2025, number: '2025-7' }, [
      { param: 'number', code: 'unknown_field' },
    ]);
    // Another institution's statement is as absent as one that does not exist.
    const { id } = await created<Statement>(stranger.issue({ donor_id: theirs.id, year: 2025 }));
    const read = await service.call('GET', `/api/v1/giving-statements/${id}`, { key: tenant.key });
    expect(read.status).toBe(404);
  });

  test('issues at once across two workers get the numbers 1..n of their year, and one donor has one issued statement', async () => {
    const { tenant, donor, gift, issue } = await institution();
    while (service.workers.length < 2) await service.startWorker();
    const donors = await Promise.all(Array.from({ length: 12 }, () => donor()));
    await Promise.all(donors.map(({ id }) => gift(id)));
    const answers = await Promise.all([
      ...donors.map(({ id }) => issue({ donor_id: id, year: 2025 })),
      ...Array.from({ length: 4 }, () => issue({ donor_id: donors[0]!.id, year: 2025 })),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
    expect(answers.map((answer) => answer.body.number).sort()).toEqual(
      Array.from({ length: 16 }, (_, index) => `2025-${index + 1}`).sort(),
    );
    const current = await service.db.anyFirst(sql.unsafe`
      SELECT count(*)::int FROM giving_statements
      WHERE institution_id = ${tenant.institutionId} AND status = 'issued'`);
    expect(current).toEqual([12]);
    const chain = await service.db.anyFirst(sql.unsafe`
      SELECT count(*)::int FROM giving_statements
      WHERE institution_id = ${tenant.institutionId} AND donor_id = ${donors[0]!.id}
        AND status = 'superseded' AND superseded_by_id IS NOT NULL`);
    expect(chain).toEqual([4]);
  });
});
