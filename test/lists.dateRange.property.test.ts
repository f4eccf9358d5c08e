import fc from 'fast-check';
import { sql } from 'slonik';
import { startTestService, type TestService } from './helpers/harness.js';
import { runs } from './helpers/propertyRuns.js';

/**
 * A gift date range is paged by windowedPage (common/pagination/listPage.ts): a short walk on the
 * id, then the range's own index (sorted) when the range is small, or a walk on the id beyond the
 * first one when it is not. Over any gifts, any range and any page size, walking its pages
 * forward and then back through the API gives exactly the range's gifts of the caller's
 * institution (of one type, when a type filter is beside the range), newest first, each once.
 * The service walks 6 rows and sorts ranges of fewer than 15, so that with a few dozen gifts
 * every way to fill a page is taken.
 */

interface Page {
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: Array<{ id: number; gift_date: string }>;
}

let service: TestService;
let donorId: number;
let neighbour: { institutionId: number; donorId: number };

const FIRST_DAY = Date.UTC(2024, 0, 1);
const DAYS = 60;
const dayOf = (offset: number) =>
  new Date(FIRST_DAY + offset * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  service = await startTestService({ LIST_RANGE_WALK_ROWS: '6', LIST_RANGE_SORT_ROWS: '15' });
  const donor = await service.call<{ id: number }>('POST', '/api/v1/donors', {
    body: {
      role: 'Individual',
      first_name: 'Range',
      last_name: 'Walker',
      email: 'range@example.org',
    },
  });
  donorId = donor.body.id;
  const other = await service.createTenant('Neighbour College');
  const otherDonor = await service.call<{ id: number }>('POST', '/api/v1/donors', {
    key: other.key,
    body: { role: 'Individual', first_name: 'Next', last_name: 'Door', email: 'next@example.org' },
  });
  neighbour = { institutionId: other.institutionId, donorId: otherDonor.body.id };
});

afterAll(async () => {
  await service?.close();
});

/**
 * Gifts with these day offsets, in this order of ids, for the institution (or the neighbour);
 * every third a check, the others cash.
 */
async function insertGifts(days: number[], institutionId: number, donor: number): Promise<void> {
  if (days.length === 0) return;
  await service.db.query(sql.unsafe`
    INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type)
    SELECT ${institutionId}, ${donor}, 10, 'USD', 'Range gift', ${dayOf(0)}::date + day,
      CASE WHEN n % 3 = 0 THEN 'check' ELSE 'cash' END
    FROM unnest(${sql.array(days, 'int4')}::int[]) WITH ORDINALITY AS t(day, n)
    ORDER BY n`);
}

const get = (path: string) => service.call<Page>('GET', path);

async function walk(query: URLSearchParams, limit: number) {
  const forward: number[] = [];
  const pages: Page[] = [];
  let response = await get(`/api/v1/gifts?${query}&limit=${limit}`);
  for (;;) {
    expect(response.status).toBe(200);
    pages.push(response.body);
    forward.push(...response.body.data.map((gift) => gift.id));
    if (!response.body.next_cursor) break;
    response = await get(
      `/api/v1/gifts?limit=${limit}&starting_after=${response.body.next_cursor}`,
    );
  }
  const backward: number[] = [];
  let cursor = pages.at(-1)!.previous_cursor;
  backward.unshift(...pages.at(-1)!.data.map((gift) => gift.id));
  while (cursor) {
    response = await get(`/api/v1/gifts?limit=${limit}&ending_before=${cursor}`);
    expect(response.status).toBe(200);
    backward.unshift(...response.body.data.map((gift) => gift.id));
    cursor = response.body.previous_cursor;
  }
  return { forward, backward };
}

test('a date range pages through exactly its gifts, newest first, forward and back', async () => {
  // Dates that mostly rise with the id (as gifts are entered), with some entered late.
  const days = fc.array(
    fc.oneof(
      { weight: 2, arbitrary: fc.constant('same' as const) },
      { weight: 2, arbitrary: fc.constant('next' as const) },
      { weight: 1, arbitrary: fc.nat(DAYS - 1) },
    ),
    { minLength: 40, maxLength: 150 },
  );
  await fc.assert(
    fc.asyncProperty(
      days,
      fc.array(fc.nat(DAYS - 1), { maxLength: 40, size: 'max' }),
      fc.nat(DAYS - 1),
      fc.nat(DAYS - 1),
      fc.integer({ min: 1, max: 4 }),
      fc.constantFrom('both', 'from', 'to'),
      fc.boolean(),
      async (steps, neighbourDays, a, b, limit, bounds, checksOnly) => {
        await service.db.query(sql.unsafe`DELETE FROM gifts`);
        let day = 0;
        const ownDays = steps.map((step) => {
          if (typeof step === 'number') return step;
          if (step === 'next') day = Math.min(DAYS - 1, day + 1);
          return day;
        });
        const half = Math.floor(ownDays.length / 2);
        await insertGifts(ownDays.slice(0, half), service.tenant.institutionId, donorId);
        await insertGifts(neighbourDays, neighbour.institutionId, neighbour.donorId);
        await insertGifts(ownDays.slice(half), service.tenant.institutionId, donorId);

        const from = dayOf(Math.min(a, b));
        const to = dayOf(Math.max(a, b));
        const query = new URLSearchParams();
        if (bounds !== 'to') query.set('gift_date_from', from);
        if (bounds !== 'from') query.set('gift_date_to', to);
        // Another filter beside the range, which every part of the page must apply too.
        if (checksOnly) query.set('type', 'check');
        const expected = (
          await service.db.anyFirst(sql.unsafe`
            SELECT id FROM gifts
            WHERE institution_id = ${service.tenant.institutionId}
              AND (${bounds === 'to'} OR gift_date >= ${from}::date)
              AND (${bounds === 'from'} OR gift_date <= ${to}::date)
              AND (${!checksOnly} OR type = 'check')
            ORDER BY id DESC`)
        ).map(Number);

        const { forward, backward } = await walk(query, limit);
        expect(forward).toEqual(expected);
        expect(backward).toEqual(expected);
      },
    ),
    { numRuns: runs(40) },
  );
});
