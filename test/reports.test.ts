// The fiscal-year reports (fundraising.md §5) on one institution whose fiscal year starts in July:
// who lands in which report and with what figures, households, currencies, pledges, a change of
// the fiscal year, the CSV form, and bad input.
import { randomUUID } from 'node:crypto';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';

const TODAY = '2027-03-15';
let service: TestService;
let tenant: Tenant;
let other: Tenant;

type Name =
  | 'kept'
  | 'lapsed'
  | 'old'
  | 'back'
  | 'fresh'
  | 'refunded'
  | 'voided'
  | 'partial'
  | 'pledger'
  | 'household'
  | 'member';
/** Donor ids by name. */
const donors = {} as Record<Name, number>;

interface Row {
  object: string;
  donor_id: number;
  display_name: string;
  last_gift_date: string;
  fiscal_year_total: number;
  previous_year_total: number;
  lifetime_total: number;
  last_counted_year?: number;
}

async function created(method: string, path: string, body: unknown, key = tenant.key) {
  const response = await service.call<{ id: number }>(method, `/api/v1${path}`, {
    key,
    body,
    headers: { 'Idempotency-Key': randomUUID() },
  });
  expect([200, 201]).toContain(response.status);
  return response.body.id;
}

const donor = (name: string, extra: Record<string, unknown> = {}) =>
  created('POST', '/donors', {
    role: 'Individual',
    first_name: name,
    last_name: 'Report',
    ...extra,
  });

const gift = (donorId: number, amount: number, date: string, extra: Record<string, unknown> = {}) =>
  created('POST', '/gifts', {
    donor_id: donorId,
    amount,
    subject: 'Report gift',
    gift_date: date,
    ...extra,
  });

const get = <T = Record<string, unknown>>(path: string, key = tenant.key) =>
  service.call<T>('GET', `/api/v1${path}`, { key });

const rows = async (report: string, query: string) => {
  const page = await get<{ data: Row[]; has_more: boolean }>(
    `/reports/${report}?${query}&limit=100`,
  );
  expect(page.status).toBe(200);
  expect(page.body.has_more).toBe(false);
  return page.body.data;
};

const ids = (list: Row[]) => list.map((row) => row.donor_id);

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: TODAY });
  tenant = await service.createTenant('Report College');
  other = await service.createTenant('Other College');
  await created('PATCH', '/institution', { fiscal_year_start_month: 7 });
  await created('POST', '/exchange-rates', {
    currency: 'EUR',
    rate: 1.1,
    effective_on: '2024-01-01',
  });

  // Fiscal year 2027 runs from 2026-07-01 to 2027-06-30.
  donors.kept = await donor('Kept');
  await gift(donors.kept, 100, '2025-09-01'); // FY2026
  await gift(donors.kept, 150, '2026-07-01'); // FY2027: upgraded
  donors.lapsed = await donor('Lapsed');
  await gift(donors.lapsed, 40, '2026-06-30'); // FY2026 only: LYBUNT for 2027
  donors.old = await donor('Old');
  await gift(donors.old, 25, '2023-12-01'); // FY2024 only: SYBUNT for 2027
  donors.back = await donor('Back');
  await gift(donors.back, 10, '2024-01-01'); // FY2024
  await gift(donors.back, 10, '2027-01-01'); // FY2027: recaptured
  donors.fresh = await donor('Fresh');
  await gift(donors.fresh, 200, '2027-02-01', { currency: 'EUR' }); // FY2027, 220.00 in USD
  donors.refunded = await donor('Refunded');
  const refunded = await gift(donors.refunded, 60, '2025-10-01');
  await created('POST', `/gifts/${refunded}/refunds`, { amount: 60, refund_date: '2025-10-02' });
  donors.voided = await donor('Voided');
  const voided = await gift(donors.voided, 70, '2025-10-01');
  await created('POST', `/gifts/${voided}/void`, { reason: 'Entered twice' });
  donors.partial = await donor('Partial');
  const partial = await gift(donors.partial, 80, '2025-11-01'); // FY2026, 30 refunded: 50 counts
  await created('POST', `/gifts/${partial}/refunds`, { amount: 30, refund_date: '2025-11-02' });
  donors.pledger = await donor('Pledger');
  const pledge = await created('POST', '/pledges', {
    donor_id: donors.pledger,
    amount: 500,
    pledge_date: '2025-08-01',
    designations: [],
    schedule: { frequency: 'one_time', installments: 1, first_due_on: '2025-08-01' },
  });
  await gift(donors.pledger, 100, '2026-08-01', { pledge_id: pledge }); // FY2027 payment only
  // The household: a member gave in FY2026, the household itself in FY2027.
  donors.household = await created('POST', '/donors', { role: 'Household', last_name: 'Family' });
  donors.member = await donor('Member', { household_id: donors.household });
  await gift(donors.member, 30, '2025-12-01');
  await gift(donors.household, 35, '2027-03-01');
}, 120_000);

afterAll(async () => {
  await service?.close();
});

describe('who is in which report', () => {
  test('LYBUNT 2027: counted in fiscal 2026 and not in 2027, newest donor first, with their figures', async () => {
    const list = await rows('lybunt', 'fiscal_year=2027');
    expect(ids(list)).toEqual([donors.member, donors.partial, donors.lapsed]);
    expect(list.find((row) => row.donor_id === donors.partial)).toEqual({
      object: 'report_row',
      donor_id: donors.partial,
      display_name: 'Partial Report',
      last_gift_date: '2025-11-01',
      fiscal_year_total: 0,
      previous_year_total: 50,
      lifetime_total: 50,
    });
  });

  test('SYBUNT 2027: counted before fiscal 2026 and in neither 2026 nor 2027, LYBUNT donors left out', async () => {
    const list = await rows('sybunt', 'fiscal_year=2027');
    expect(list).toEqual([
      {
        object: 'report_row',
        donor_id: donors.old,
        display_name: 'Old Report',
        last_gift_date: '2023-12-01',
        fiscal_year_total: 0,
        previous_year_total: 0,
        lifetime_total: 25,
        last_counted_year: 2024,
      },
    ]);
  });

  test('first-time donors 2027: first counted gift ever in 2027, in the base currency; a pledge counts by its payment only', async () => {
    const list = await rows('first-time-donors', 'fiscal_year=2027');
    expect(ids(list)).toEqual([donors.household, donors.pledger, donors.fresh]);
    expect(list.find((row) => row.donor_id === donors.fresh)?.fiscal_year_total).toBe(220);
    expect(list.find((row) => row.donor_id === donors.pledger)).toMatchObject({
      fiscal_year_total: 100,
      lifetime_total: 100,
      last_gift_date: '2026-08-01',
    });
  });

  test('at household level, a member rolls into its household, counted once', async () => {
    expect(ids(await rows('lybunt', 'fiscal_year=2027&level=household'))).toEqual([
      donors.partial,
      donors.lapsed,
    ]);
    const retained = await get('/reports/retention?fiscal_year=2027&level=household');
    expect(retained.body).toMatchObject({ level: 'household', retained: 2, previous_donors: 4 });
    const summary = await get(`/donors/${donors.member}/giving-summary?level=household`);
    expect(summary.body).toMatchObject({
      lifetime_total: 65,
      by_fiscal_year: [
        { fiscal_year: 2026, total: 30, gift_count: 1 },
        { fiscal_year: 2027, total: 35, gift_count: 1 },
      ],
    });
  });

  test('retention 2027 with the Fundraising Effectiveness Project’s definitions', async () => {
    const answer = await get('/reports/retention?fiscal_year=2027');
    expect(answer.status).toBe(200);
    // 2026: kept 100, lapsed 40, partial 50, member 30. 2027: kept 150, back 10, fresh 220,
    // pledger 100, household 35.
    expect(answer.body).toEqual({
      object: 'retention',
      fiscal_year: 2027,
      level: 'donor',
      previous_donors: 4,
      retained: 1,
      retention_rate: 0.25,
      new: 3,
      recaptured: 1,
      lapsed: 3,
      upgraded: 1,
      downgraded: 0,
      unchanged: 0,
      previous_amount: 220,
      amount: 515,
    });
    const empty = await get('/reports/retention?fiscal_year=2001');
    expect(empty.body).toMatchObject({ previous_donors: 0, retention_rate: null, amount: 0 });
  });

  test('a giving summary: every fiscal year, consecutive years up to the current one, the best year', async () => {
    const summary = await get(`/donors/${donors.kept}/giving-summary`);
    expect(summary.status).toBe(200);
    expect(summary.body).toEqual({
      object: 'giving_summary',
      donor_id: donors.kept,
      level: 'donor',
      lifetime_total: 250,
      first_gift_date: '2025-09-01',
      last_gift_date: '2026-07-01',
      largest_gift: 150,
      years_given: 2,
      consecutive_years: 2,
      best_year: { fiscal_year: 2027, total: 150 },
      by_fiscal_year: [
        { fiscal_year: 2026, total: 100, gift_count: 1 },
        { fiscal_year: 2027, total: 150, gift_count: 1 },
      ],
    });
    const none = await get(`/donors/${donors.voided}/giving-summary`);
    expect(none.body).toMatchObject({
      lifetime_total: 0,
      first_gift_date: null,
      largest_gift: null,
      years_given: 0,
      consecutive_years: 0,
      best_year: null,
      by_fiscal_year: [],
    });
  });
});

describe('current after every write', () => {
  test('a gift, then its void, moves a donor in and out of LYBUNT at once', async () => {
    const id = await gift(donors.lapsed, 5, '2026-12-01');
    expect(ids(await rows('lybunt', 'fiscal_year=2027'))).not.toContain(donors.lapsed);
    await created('POST', `/gifts/${id}/void`, { reason: 'Test' });
    expect(ids(await rows('lybunt', 'fiscal_year=2027'))).toContain(donors.lapsed);
  });

  test('a change of the fiscal year’s first month changes every answer at once', async () => {
    await created('PATCH', '/institution', { fiscal_year_start_month: 1 });
    try {
      // Calendar years now: kept gave in 2025 and 2026; lapsed's 2026-06-30 gift is in 2026.
      const summary = await get(`/donors/${donors.kept}/giving-summary`);
      expect(summary.body).toMatchObject({
        by_fiscal_year: [
          { fiscal_year: 2025, total: 100 },
          { fiscal_year: 2026, total: 150 },
        ],
        consecutive_years: 2,
      });
      expect(ids(await rows('lybunt', 'fiscal_year=2027'))).toContain(donors.kept);
    } finally {
      await created('PATCH', '/institution', { fiscal_year_start_month: 7 });
    }
    expect(ids(await rows('lybunt', 'fiscal_year=2027'))).not.toContain(donors.kept);
  });
});

describe('the whole report as CSV', () => {
  test('Accept: text/csv answers every row, a header of the row’s fields, formula cells neutralised', async () => {
    const sly = await donor('=HYPERLINK("http://x")');
    await gift(sly, 12, '2025-08-01');
    const response = await fetch(`${service.url}/api/v1/reports/lybunt?fiscal_year=2027`, {
      headers: { 'X-Service-API-Key': tenant.key, Accept: 'text/csv' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="lybunt.csv"');
    const lines = (await response.text()).trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'object,donor_id,display_name,last_gift_date,fiscal_year_total,previous_year_total,lifetime_total',
    );
    const json = await rows('lybunt', 'fiscal_year=2027');
    expect(lines.slice(1).map((line) => Number(line.split(',')[1]))).toEqual(ids(json));
    expect(lines[1]).toBe(
      `report_row,${sly},"'=HYPERLINK(""http://x"") Report",2025-08-01,0,12,12`,
    );
  });

  test('a cursor or a limit with text/csv is refused: the CSV is the whole report', async () => {
    const response = await fetch(`${service.url}/api/v1/reports/sybunt?fiscal_year=2027&limit=5`, {
      headers: { 'X-Service-API-Key': tenant.key, Accept: 'text/csv' },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 'invalid_parameter', param: 'limit' },
    });
  });
});

describe('bad input', () => {
  test.each(['lybunt', 'sybunt', 'first-time-donors', 'retention'])(
    '/reports/%s without fiscal_year is 400 parameter_missing, a fiscal year that is not one or an unknown level 400 invalid_parameter',
    async (report) => {
      const missing = await get(`/reports/${report}`);
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({
        error: { code: 'parameter_missing', param: 'fiscal_year' },
      });
      for (const year of ['abc', '27', '2027.5', '99999', '0000']) {
        const wrong = await get(`/reports/${report}?fiscal_year=${year}`);
        expect(wrong.status).toBe(400);
        expect(wrong.body).toMatchObject({
          error: { code: 'invalid_parameter', param: 'fiscal_year' },
        });
      }
      const level = await get(`/reports/${report}?fiscal_year=2027&level=family`);
      expect(level.status).toBe(400);
      expect(level.body).toMatchObject({ error: { code: 'invalid_parameter', param: 'level' } });
    },
  );

  test('another institution sees none of these donors: its reports are empty, its giving summary 404', async () => {
    expect(await rows('lybunt', 'fiscal_year=2027').then((list) => list.length)).toBeGreaterThan(0);
    const theirs = await get<{ data: Row[] }>('/reports/lybunt?fiscal_year=2027', other.key);
    expect(theirs.body.data).toEqual([]);
    const summary = await get(`/donors/${donors.kept}/giving-summary`, other.key);
    expect(summary.status).toBe(404);
    expect(summary.body).toMatchObject({ error: { code: 'resource_not_found' } });
    const unknown = await get(`/donors/${donors.kept}/giving-summary?fiscal_year=2027`);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({
      error: { code: 'invalid_parameter', param: 'fiscal_year' },
    });
  });

  test('a cursor keeps its fiscal year and level: another one beside it is refused', async () => {
    const first = await get<{ next_cursor: string }>('/reports/lybunt?fiscal_year=2027&limit=1');
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const changed = await get(
      `/reports/lybunt?fiscal_year=2026&starting_after=${first.body.next_cursor}`,
    );
    expect(changed.status).toBe(400);
    expect(changed.body).toMatchObject({ error: { code: 'invalid_cursor' } });
  });
});
