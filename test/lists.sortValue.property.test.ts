import fc from 'fast-check';
import { sql } from 'slonik';
import { startTestService, type TestService } from './helpers/harness.js';
import { runs } from './helpers/propertyRuns.js';

/**
 * A donor's consents are paged on (captured_at, id), newest first (common/pagination/listPage.ts,
 * ListSpec.sort). Over any consents, captured at a few instants (many ties, some a millisecond
 * apart, so that a value rounded on its way through a cursor would show), any page sizes and
 * consents recorded between pages, walking the list forward and then back through the API gives
 * the donor's consents in the order of a plain sort, each once: every consent that was already
 * there, and every one recorded on the side of the position not yet read.
 */

interface Consent {
  id: number;
  donor_id: number;
  captured_at: string;
}

interface Page {
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: Consent[];
}

let service: TestService;
let donorId: number;
let sibling: number;
let neighbour: { institutionId: number; donorId: number };

// Backdated instants, two pairs a millisecond apart; the list's order is by the instant.
const INSTANTS = [
  '2024-02-29T23:59:59.999Z',
  '2024-03-01T00:00:00.000Z',
  '2025-06-30T12:00:00.120Z',
  '2025-06-30T12:00:00.121Z',
  '2025-12-31T08:15:00.500Z',
  '2026-01-15T09:30:00.001Z',
];

beforeAll(async () => {
  service = await startTestService();
  const donor = async (name: string, key?: string) => {
    const response = await service.call<{ id: number }>('POST', '/api/v1/donors', {
      ...(key ? { key } : {}),
      body: {
        role: 'Individual',
        first_name: name,
        last_name: 'Lovelace',
        email: `${name.toLowerCase()}@example.org`,
      },
    });
    expect(response.status).toBe(201);
    return response.body.id;
  };
  donorId = await donor('Ada');
  sibling = await donor('Byron');
  const other = await service.createTenant('Neighbour College');
  neighbour = { institutionId: other.institutionId, donorId: await donor('Annabella', other.key) };
});

afterAll(async () => {
  await service?.close();
});

/** Consents captured at these instants (by index), in this order of ids. */
async function insertConsents(
  instants: number[],
  institutionId: number,
  donor: number,
): Promise<Consent[]> {
  if (instants.length === 0) return [];
  const rows = await service.db.any(sql.unsafe`
    INSERT INTO consents (institution_id, donor_id, channel, response, source, captured_at)
    SELECT ${institutionId}, ${donor}, 'email', 'opt_out', 'Reply card', at::timestamptz
    FROM unnest(${sql.array(
      instants.map((index) => INSTANTS[index]!),
      'text',
    )}::text[]) WITH ORDINALITY AS t(at, n)
    ORDER BY n
    RETURNING id, donor_id, captured_at`);
  return (rows as readonly Consent[]).map((row) => ({ ...row })).sort((a, b) => a.id - b.id);
}

/** Negative when a comes first in the list: newest captured_at, then newest id. */
const listOrder = (a: Consent, b: Consent) =>
  a.captured_at === b.captured_at ? b.id - a.id : a.captured_at < b.captured_at ? 1 : -1;

const get = async (query: string) => {
  const response = await service.call<Page>('GET', `/api/v1/donors/${donorId}/consents?${query}`);
  expect(response.status).toBe(200);
  return response.body;
};

const ids = (consents: Consent[]) => consents.map((consent) => consent.id);

interface Walk {
  limits: number[];
  inserts: number[][];
}

/**
 * Pages from the first page to the last and back, recording consents between pages. Expected,
 * each way: the rows present when the walk began past its start, and each row recorded mid-walk
 * that lies past the position the next page is read from.
 */
async function walk(initial: Consent[], { limits, inserts }: Walk) {
  const all = [...initial];
  let step = 0;
  const limit = () => limits[step % limits.length]!;
  // Recorded between the first pages of each way only: going back, a consent recorded at the
  // newest instant is ahead of every position, so recording at every page (more than a page
  // reads) would never let the walk end.
  const recordBetweenPages = async (ahead: (row: Consent) => boolean) => {
    const made = await insertConsents(inserts[step] ?? [], service.tenant.institutionId, donorId);
    all.push(...made);
    step += 1;
    return made.filter(ahead);
  };

  const forward: Consent[] = [];
  let forwardExpected = [...initial];
  let page = await get(`limit=${limit()}`);
  forward.push(...page.data);
  while (page.next_cursor) {
    const position = page.data.at(-1)!;
    forwardExpected.push(...(await recordBetweenPages((row) => listOrder(position, row) < 0)));
    page = await get(`limit=${limit()}&starting_after=${page.next_cursor}`);
    forward.push(...page.data);
  }
  expect(page.has_more).toBe(false);
  forwardExpected = forwardExpected.sort(listOrder);

  // Back from the last page: every row before its first, as the list stands now and as it grows.
  step = 0;
  const start = page.data[0];
  const backward: Consent[] = [];
  let backwardExpected = start ? all.filter((row) => listOrder(row, start) < 0) : [];
  let cursor = page.previous_cursor;
  while (cursor) {
    const position = backward[0] ?? start!;
    backwardExpected.push(...(await recordBetweenPages((row) => listOrder(row, position) < 0)));
    const back = await get(`limit=${limit()}&ending_before=${cursor}`);
    backward.unshift(...back.data);
    cursor = back.previous_cursor;
  }
  backwardExpected = backwardExpected.sort(listOrder);
  return { forward, forwardExpected, backward, backwardExpected };
}

test('consents page newest captured_at first, ties newest id first, forward and back, each once', async () => {
  const instant = fc.nat(INSTANTS.length - 1);
  await fc.assert(
    fc.asyncProperty(
      fc.array(instant, { maxLength: 40 }),
      fc.array(instant, { maxLength: 10 }),
      fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 20 }),
      fc.array(fc.array(instant, { maxLength: 3 }), { minLength: 1, maxLength: 20 }),
      async (own, others, limits, inserts) => {
        await service.db.query(sql.unsafe`DELETE FROM consents`);
        const half = Math.floor(own.length / 2);
        const initial = await insertConsents(
          own.slice(0, half),
          service.tenant.institutionId,
          donorId,
        );
        // Another donor's and another institution's consents, between the donor's own ids.
        await insertConsents(others, service.tenant.institutionId, sibling);
        await insertConsents(others, neighbour.institutionId, neighbour.donorId);
        initial.push(
          ...(await insertConsents(own.slice(half), service.tenant.institutionId, donorId)),
        );

        const result = await walk(initial, { limits, inserts });
        expect(ids(result.forward)).toEqual(ids(result.forwardExpected));
        // The values came back through the API exactly as stored.
        expect(result.forward).toEqual(
          result.forwardExpected.map((row) => expect.objectContaining(row)),
        );
        expect(ids(result.backward)).toEqual(ids(result.backwardExpected));
        // The order expected is the database's own sort of the same rows.
        const stored = (
          await service.db.anyFirst(sql.unsafe`
            SELECT id FROM consents
            WHERE institution_id = ${service.tenant.institutionId} AND donor_id = ${donorId}
            ORDER BY captured_at DESC, id DESC`)
        ).map(Number);
        for (const expected of [result.forwardExpected, result.backwardExpected]) {
          const wanted = new Set(ids(expected));
          expect(stored.filter((id) => wanted.has(id))).toEqual(ids(expected));
        }
      },
    ),
    // 20 walks: each is up to 60 consents and 40 pages through the API, and the suite runs it
    // beside every other file on two cores.
    { numRuns: runs(20) },
  );
}, 180_000);
