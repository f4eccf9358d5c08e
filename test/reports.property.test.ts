import fc from 'fast-check';
import { sql } from 'slonik';
import { z } from 'zod';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { checkAfterEveryStep, TenantSteps } from './helpers/stepWorld.js';
import { runs } from './helpers/propertyRuns.js';
import { rebuildStaleGivingYears } from '../common/reports/givingYears.js';
import { givingYearsDrift } from './helpers/givingYears.js';

/**
 * fundraising.md §5, over any sequence of gifts over five fiscal years, edits, deletes, refunds,
 * voids, household joins and leaves, merges, changes of the fiscal year's first month and the
 * maintenance that builds the fiscal years' rows again for it: after every step, the kept years
 * equal their months' sums, and LYBUNT, SYBUNT, first-time donors, retention (every fiscal year
 * around the gifts' years, at both levels) and every donor's giving summary equal a plain
 * recomputation from the gifts table as it then is.
 */

const TODAY = '2027-03-15';
let service: TestService;

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: TODAY });
});

afterAll(async () => {
  await service?.close();
});

const PEOPLE = 3;
/** Donors: PEOPLE individuals, then the household. */
const HOUSEHOLD = PEOPLE;
const DATES = [
  '2022-08-15',
  '2023-03-31',
  '2023-07-01',
  '2024-01-15',
  '2024-06-30',
  '2025-07-01',
  '2025-12-31',
  '2026-04-01',
  '2026-09-30',
  '2027-01-05',
];
const START_MONTHS = [1, 4, 7, 10];
const YEARS = [2022, 2023, 2024, 2025, 2026, 2027, 2028];

type Op =
  | { kind: 'gift'; donor: number; cents: number; date: number }
  | { kind: 'edit'; gift: number; donor: number; cents: number; date: number }
  | { kind: 'delete'; gift: number }
  | { kind: 'refund'; gift: number; share: number }
  | { kind: 'void'; gift: number }
  | { kind: 'join'; person: number }
  | { kind: 'leave'; person: number }
  | { kind: 'fiscal'; month: number }
  | { kind: 'rebuild' }
  | { kind: 'merge'; into: number; from: number };

const giftFields = {
  donor: fc.nat(PEOPLE),
  cents: fc.integer({ min: 1, max: 50_000 }),
  date: fc.nat(DATES.length - 1),
};
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('gift' as const), ...giftFields }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('edit' as const), gift: fc.nat(20), ...giftFields }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), gift: fc.nat(20) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      gift: fc.nat(20),
      share: fc.double({ min: 0.1, max: 1, noNaN: true }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('void' as const), gift: fc.nat(20) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('join' as const), person: fc.nat(PEOPLE - 1) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('leave' as const), person: fc.nat(PEOPLE - 1) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('fiscal' as const),
      month: fc.constantFrom(...START_MONTHS),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rebuild' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('merge' as const),
      into: fc.nat(PEOPLE - 1),
      from: fc.nat(PEOPLE - 1),
    }),
  },
);

const countedGift = z.object({
  donor_id: z.number(),
  household_unit: z.number(),
  gift_date: z.string(),
  net: z.string(),
});
type Counted = z.infer<typeof countedGift>;

const cents = (value: number | string) => Math.round(Number(value) * 100);
const fiscalYearOf = (date: string, start: number) => {
  const [year, month] = date.split('-').map(Number) as [number, number];
  return start !== 1 && month >= start ? year + 1 : year;
};

interface UnitYears {
  /** Fiscal year → [cents, gifts]. */
  years: Map<number, [number, number]>;
  lifetime: number;
  dates: string[];
  largest: number;
}

/** Each unit's counted giving by fiscal year, from the counted gifts. */
function unitsOf(gifts: readonly Counted[], household: boolean, start: number) {
  const units = new Map<number, UnitYears>();
  for (const gift of gifts) {
    const unit = household ? gift.household_unit : gift.donor_id;
    const found: UnitYears = units.get(unit) ?? {
      years: new Map(),
      lifetime: 0,
      dates: [],
      largest: 0,
    };
    const year = fiscalYearOf(gift.gift_date, start);
    const [total, count] = found.years.get(year) ?? [0, 0];
    found.years.set(year, [total + cents(gift.net), count + 1]);
    found.lifetime += cents(gift.net);
    found.dates.push(gift.gift_date);
    found.largest = Math.max(found.largest, cents(gift.net));
    units.set(unit, found);
  }
  return units;
}

interface ReportRow {
  donor_id: number;
  last_gift_date: string;
  fiscal_year_total: number;
  previous_year_total: number;
  lifetime_total: number;
  last_counted_year?: number;
}

class World extends TenantSteps {
  readonly donors: number[] = [];
  /** A person merged into another: the survivor's index (a tombstone takes no more writes). */
  readonly mergedInto = new Map<number, number>();
  readonly gifts: { id: number; locked: boolean; deleted: boolean }[] = [];
  constructor(tenant: Tenant) {
    super(service, tenant);
  }

  async setUp(): Promise<void> {
    this.donors.push(...(await this.peopleAndHousehold(PEOPLE)));
  }

  /** The donor a person's writes go to: itself, or the one it was merged into. */
  private live(person: number): number {
    const survivor = this.mergedInto.get(person);
    return survivor === undefined ? person : this.live(survivor);
  }

  private pick(index: number) {
    const live = this.gifts.filter((gift) => !gift.deleted);
    return live[index % Math.max(1, live.length)];
  }

  async apply(operation: Op): Promise<void> {
    switch (operation.kind) {
      case 'gift': {
        const response = await this.call<{ id: number }>('POST', '/gifts', {
          donor_id: this.donors[this.live(operation.donor)],
          amount: operation.cents / 100,
          subject: 'Report gift',
          gift_date: DATES[operation.date],
        });
        expect(response.status).toBe(201);
        this.gifts.push({ id: response.body.id, locked: false, deleted: false });
        return;
      }
      case 'edit': {
        const gift = this.pick(operation.gift);
        if (!gift) return;
        const response = await this.call('PATCH', `/gifts/${gift.id}`, {
          donor_id: this.donors[this.live(operation.donor)],
          amount: operation.cents / 100,
          gift_date: DATES[operation.date],
        });
        expect(response.status).toBe(gift.locked ? 409 : 200);
        return;
      }
      case 'delete': {
        const gift = this.pick(operation.gift);
        if (!gift) return;
        const response = await this.call('DELETE', `/gifts/${gift.id}`);
        expect(response.status).toBe(gift.locked ? 409 : 200);
        if (!gift.locked) gift.deleted = true;
        return;
      }
      case 'refund': {
        const gift = this.pick(operation.gift);
        if (!gift) return;
        const found = await this.call<{ net_amount: number; status: string }>(
          'GET',
          `/gifts/${gift.id}`,
        );
        const asked = Math.floor(cents(found.body.net_amount) * operation.share);
        if (found.body.status === 'voided' || asked <= 0) return;
        const response = await this.call('POST', `/gifts/${gift.id}/refunds`, {
          amount: asked / 100,
          refund_date: '2027-02-01',
        });
        expect(response.status).toBe(201);
        gift.locked = true;
        return;
      }
      case 'void': {
        const gift = this.pick(operation.gift);
        if (!gift) return;
        const response = await this.call('POST', `/gifts/${gift.id}/void`, { reason: 'Error' });
        expect([200, 409]).toContain(response.status);
        gift.locked = true;
        return;
      }
      case 'join':
      case 'leave': {
        const person = this.live(operation.person);
        const response = await this.call('PATCH', `/donors/${this.donors[person]}`, {
          household_id: operation.kind === 'join' ? this.donors[HOUSEHOLD] : null,
        });
        expect(response.status).toBe(200);
        return;
      }
      case 'merge': {
        const [into, from] = [this.live(operation.into), this.live(operation.from)];
        if (into === from) return;
        const response = await this.call('POST', `/donors/${this.donors[into]}/merge`, {
          source_id: this.donors[from],
        });
        expect(response.status).toBe(200);
        this.mergedInto.set(from, into);
        return;
      }
      case 'fiscal': {
        const response = await this.call('PATCH', '/institution', {
          fiscal_year_start_month: operation.month,
        });
        expect(response.status).toBe(200);
        return;
      }
      case 'rebuild': {
        // The worker's maintenance, as it runs every ten minutes.
        await rebuildStaleGivingYears(service.db);
        return;
      }
    }
  }

  /** Every row of a report list, through its pages. */
  private async rows(report: string, year: number, level: string): Promise<ReportRow[]> {
    const rows: ReportRow[] = [];
    let path = `/reports/${report}?fiscal_year=${year}&level=${level}&limit=2`;
    for (;;) {
      const page = await this.call<{ data: ReportRow[]; next_cursor: string | null }>('GET', path);
      expect(page.status).toBe(200);
      rows.push(...page.body.data);
      if (!page.body.next_cursor) return rows;
      path = `/reports/${report}?limit=2&starting_after=${page.body.next_cursor}`;
    }
  }

  async check(): Promise<void> {
    const institutionId = this.tenant.institutionId;
    const start = Number(
      await service.db.oneFirst(
        sql.unsafe`SELECT fiscal_year_start_month FROM institutions WHERE id = ${institutionId}`,
      ),
    );
    // The years retention reads are the months' sums under the start month they were built for.
    expect(await givingYearsDrift(service.db, institutionId)).toEqual([]);
    // The plain recomputation: the gifts table as it is now, nothing kept.
    const gifts = await service.db.any(sql.type(countedGift)`
      SELECT g.donor_id, coalesce(d.household_id, d.id) AS household_unit,
             g.gift_date::text, (g.base_amount - g.base_amount_refunded)::text AS net
      FROM gifts g JOIN donors d ON d.institution_id = g.institution_id AND d.id = g.donor_id
      WHERE g.institution_id = ${institutionId} AND g.status = 'posted'
        AND g.base_amount - g.base_amount_refunded > 0`);

    for (const level of ['donor', 'household'] as const) {
      const units = unitsOf(gifts, level === 'household', start);
      const row = (unit: number, data: UnitYears, year: number) => ({
        donor_id: unit,
        last_gift_date: data.dates.sort().at(-1)!,
        fiscal_year_total: (data.years.get(year)?.[0] ?? 0) / 100,
        previous_year_total: (data.years.get(year - 1)?.[0] ?? 0) / 100,
        lifetime_total: data.lifetime / 100,
      });
      const newestFirst = (a: { donor_id: number }, b: { donor_id: number }) =>
        b.donor_id - a.donor_id;
      for (const year of YEARS) {
        const lybunt = [];
        const sybunt = [];
        const firstTime = [];
        const retention = {
          previous_donors: 0,
          retained: 0,
          new: 0,
          recaptured: 0,
          lapsed: 0,
          upgraded: 0,
          downgraded: 0,
          unchanged: 0,
          previous_amount: 0,
          amount: 0,
        };
        for (const [unit, data] of units) {
          const counted = [...data.years.keys()].filter((given) => given <= year);
          const previous = data.years.get(year - 1)?.[0];
          const current = data.years.get(year)?.[0];
          const earlier = counted.some((given) => given < year - 1);
          if (previous !== undefined && current === undefined) lybunt.push(row(unit, data, year));
          if (previous === undefined && current === undefined && earlier)
            sybunt.push({ ...row(unit, data, year), last_counted_year: Math.max(...counted) });
          if (current !== undefined && !earlier && previous === undefined)
            firstTime.push(row(unit, data, year));
          if (previous !== undefined) {
            retention.previous_donors += 1;
            retention.previous_amount += previous;
          }
          if (current !== undefined) retention.amount += current;
          if (previous !== undefined && current !== undefined) {
            retention.retained += 1;
            if (current > previous) retention.upgraded += 1;
            else if (current < previous) retention.downgraded += 1;
            else retention.unchanged += 1;
          }
          if (previous !== undefined && current === undefined) retention.lapsed += 1;
          if (previous === undefined && current !== undefined) {
            if (earlier) retention.recaptured += 1;
            else retention.new += 1;
          }
        }
        const listed = {
          lybunt: await this.rows('lybunt', year, level),
          sybunt: await this.rows('sybunt', year, level),
          first: await this.rows('first-time-donors', year, level),
        };
        const strip = (rows: ReportRow[]) =>
          rows.map((listedRow) => {
            const { donor_id, last_gift_date, fiscal_year_total, previous_year_total } = listedRow;
            return {
              donor_id,
              last_gift_date,
              fiscal_year_total,
              previous_year_total,
              lifetime_total: listedRow.lifetime_total,
              ...(listedRow.last_counted_year === undefined
                ? {}
                : { last_counted_year: listedRow.last_counted_year }),
            };
          });
        expect({ year, level, start, ...listed, lybunt: strip(listed.lybunt) }).toEqual({
          year,
          level,
          start,
          lybunt: lybunt.sort(newestFirst),
          sybunt: sybunt.sort(newestFirst).map((expected) => expect.objectContaining(expected)),
          first: firstTime.sort(newestFirst).map((expected) => expect.objectContaining(expected)),
        });
        const answered = await this.call<Record<string, unknown>>(
          'GET',
          `/reports/retention?fiscal_year=${year}&level=${level}`,
        );
        expect(answered.status).toBe(200);
        expect({ year, level, start, ...answered.body }).toEqual({
          year,
          level,
          start,
          object: 'retention',
          fiscal_year: year,
          ...retention,
          previous_amount: retention.previous_amount / 100,
          amount: retention.amount / 100,
          retention_rate:
            retention.previous_donors === 0
              ? null
              : Math.round((retention.retained / retention.previous_donors) * 10_000) / 10_000,
        });
      }

      for (const [index, donorId] of this.donors.entries()) {
        const unit =
          level === 'donor'
            ? donorId
            : Number(
                await service.db.oneFirst(
                  sql.unsafe`SELECT coalesce(household_id, id) FROM donors WHERE id = ${donorId}`,
                ),
              );
        const data = units.get(unit);
        const byYear = data
          ? [...data.years.entries()]
              .sort(([a], [b]) => a - b)
              .map(([fiscal_year, [total, gift_count]]) => ({
                fiscal_year,
                total: total / 100,
                gift_count,
              }))
          : [];
        const given = new Set(byYear.map((year) => year.fiscal_year));
        let run = 0;
        for (
          let year = given.has(fiscalYearOf(TODAY, start))
            ? fiscalYearOf(TODAY, start)
            : fiscalYearOf(TODAY, start) - 1;
          given.has(year);
          year -= 1
        )
          run += 1;
        const best = byYear.reduce<(typeof byYear)[number] | null>(
          (found, year) => (found === null || year.total > found.total ? year : found),
          null,
        );
        const summary = await this.call('GET', `/donors/${donorId}/giving-summary?level=${level}`);
        expect(summary.status).toBe(200);
        const dates = data?.dates.sort() ?? [];
        expect({ index, level, ...summary.body }).toEqual({
          index,
          level,
          object: 'giving_summary',
          donor_id: donorId,
          lifetime_total: (data?.lifetime ?? 0) / 100,
          first_gift_date: dates[0] ?? null,
          last_gift_date: dates.at(-1) ?? null,
          largest_gift: data ? data.largest / 100 : null,
          years_given: byYear.length,
          consecutive_years: run,
          best_year: best && { fiscal_year: best.fiscal_year, total: best.total },
          by_fiscal_year: byYear,
        });
      }
    }
  }
}

test('every fiscal-year report and giving summary equals a plain recomputation from the gifts after every step of any sequence of gifts, edits, deletes, refunds, voids, household joins and leaves, merges, fiscal-year changes and rebuilds of the years', async () => {
  await checkAfterEveryStep(op, async () => new World(await service.createTenant()), {
    maxLength: 10,
    numRuns: runs(12),
  });
}, 600_000);
