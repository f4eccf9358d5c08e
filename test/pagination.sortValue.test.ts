import fc from 'fast-check';
import { sql } from 'slonik';
import { z } from 'zod';
import { DEFAULT_RANGE_READING, listPage } from '../common/pagination/listPage.js';
import { parseListRequest } from '../common/pagination/listRequest.js';
import type { ListSpec, SortValue } from '../common/pagination/listSpec.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { runs } from './helpers/propertyRuns.js';

/**
 * The cursor engine's sort value in general (ListSpec.sort), beyond the consent list that uses
 * it: a numeric or a text value, highest or lowest first, on gifts' amount and subject, read
 * through the engine itself against the real database. Whatever the values (many ties) and the
 * page sizes, walking forward and then back gives the database's own order, each row once.
 */

const giftRow = z.object({ id: z.number(), amount: z.string(), subject: z.string() });
type GiftRow = z.infer<typeof giftRow>;

interface Page {
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: GiftRow[];
}

let service: TestService;
let donorId: number;

const specOf = (sort: SortValue): ListSpec<GiftRow> => ({
  endpoint: '/api/v1/sorted-gifts',
  from: sql.fragment`gifts`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  sort,
  columns: sql.fragment`id, amount, subject`,
  row: giftRow,
  keyOf: (row) => row.id,
  present: (row) => ({ ...row }),
  filters: {},
});

const SORTS = {
  'amount, highest first': {
    spec: specOf({ column: sql.fragment`amount`, type: 'numeric', direction: 'desc' }),
    order: sql.fragment`amount DESC, id DESC`,
  },
  'amount, lowest first': {
    spec: specOf({ column: sql.fragment`amount`, type: 'numeric', direction: 'asc' }),
    order: sql.fragment`amount ASC, id ASC`,
  },
  'subject, in the database’s collation': {
    spec: specOf({ column: sql.fragment`subject`, type: 'text', direction: 'asc' }),
    order: sql.fragment`subject ASC, id ASC`,
  },
};

const AMOUNTS = ['0.01', '0.10', '1.00', '999999999999.98', '999999999999.99'];
const SUBJECTS = ['apple', 'Apple', 'a pple', 'ápple', 'b', 'B’s "gift"', '10', '9'];

beforeAll(async () => {
  service = await startTestService();
  const donor = await service.call<{ id: number }>('POST', '/api/v1/donors', {
    body: { role: 'Individual', first_name: 'Sort', last_name: 'Order', email: 's@example.org' },
  });
  expect(donor.status).toBe(201);
  donorId = donor.body.id;
});

afterAll(async () => {
  await service?.close();
});

async function page(spec: ListSpec<GiftRow>, query: Record<string, string>): Promise<Page> {
  const context = {
    institutionId: service.tenant.institutionId,
    secret: service.config.CURSOR_SECRET,
    nowSeconds: Math.floor(Date.now() / 1000),
  };
  const request = parseListRequest(spec, query, context);
  return (await listPage(service.db, spec, request, {
    ...context,
    ttlSeconds: 600,
    ranges: DEFAULT_RANGE_READING,
  })) as unknown as Page;
}

test.each(Object.entries(SORTS))(
  '%s: forward and back, each row once, in the database’s order',
  async (_name, { spec, order }) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...AMOUNTS), fc.constantFrom(...SUBJECTS)), {
          maxLength: 30,
        }),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 10 }),
        async (gifts, limits) => {
          await service.db.query(sql.unsafe`DELETE FROM gifts`);
          if (gifts.length > 0)
            await service.db.query(sql.unsafe`
              INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type)
              SELECT ${service.tenant.institutionId}, ${donorId}, amount::numeric, 'USD', subject,
                '2026-01-01', 'cash'
              FROM unnest(${sql.array(
                gifts.map(([amount]) => amount),
                'text',
              )}::text[], ${sql.array(
                gifts.map(([, subject]) => subject),
                'text',
              )}::text[]) WITH ORDINALITY AS t(amount, subject, n)
              ORDER BY n`);
          const expected = (
            await service.db.anyFirst(sql.unsafe`
              SELECT id FROM gifts WHERE institution_id = ${service.tenant.institutionId}
              ORDER BY ${order}`)
          ).map(Number);

          let step = 0;
          const limit = () => String(limits[step++ % limits.length]);
          const pages = [await page(spec, { limit: limit() })];
          while (pages.at(-1)!.next_cursor)
            pages.push(
              await page(spec, { limit: limit(), starting_after: pages.at(-1)!.next_cursor! }),
            );
          const forward = pages.flatMap((each) => each.data);
          expect(forward.map((row) => row.id)).toEqual(expected);
          const backward = [...pages.at(-1)!.data];
          let cursor = pages.at(-1)!.previous_cursor;
          while (cursor) {
            const back = await page(spec, { limit: limit(), ending_before: cursor });
            backward.unshift(...back.data);
            cursor = back.previous_cursor;
          }
          expect(backward.map((row) => row.id)).toEqual(expected);
        },
      ),
      { numRuns: runs(25) },
    );
  },
);

test('a cursor of a list ordered by the key alone is refused by a sorted list, and the reverse', async () => {
  await service.db.query(sql.unsafe`DELETE FROM gifts`);
  await service.db.query(sql.unsafe`
    INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type)
    SELECT ${service.tenant.institutionId}, ${donorId}, 5, 'USD', 'x', '2026-01-01', 'cash'
    FROM generate_series(1, 3)`);
  const sorted = SORTS['amount, highest first'].spec;
  const { sort: _sort, ...byKey } = sorted;
  const sortedNext = (await page(sorted, { limit: '1' })).next_cursor!;
  const byKeyNext = (await page(byKey, { limit: '1' })).next_cursor!;
  expect((await page(sorted, { starting_after: sortedNext })).data).toHaveLength(2);
  expect((await page(byKey, { starting_after: byKeyNext })).data).toHaveLength(2);
  for (const [spec, cursor] of [
    [sorted, byKeyNext],
    [byKey, sortedNext],
  ] as const)
    expect(() =>
      parseListRequest(
        spec,
        { starting_after: cursor },
        {
          institutionId: service.tenant.institutionId,
          secret: service.config.CURSOR_SECRET,
          nowSeconds: Math.floor(Date.now() / 1000),
        },
      ),
    ).toThrow(
      expect.objectContaining({
        status: 400,
        body: expect.objectContaining({ code: 'invalid_cursor' }),
      }),
    );
});
