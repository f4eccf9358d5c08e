import fc from 'fast-check';
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { runs } from './helpers/propertyRuns.js';

/**
 * Over any donors written in one statement (as an import's chunk writes them: the triggers see
 * them all at once), the pairs are exactly those the documented rule gives, computed here on its
 * own from the donors' fields; and walking `GET /duplicates` (any page size, any `min_score`)
 * forward and back through the API gives every pair once, highest score first, then newest.
 */

interface Donor {
  role: 'Individual' | 'Household';
  first_name: string | null;
  last_name: string;
  phone: string | null;
  postal_code: string | null;
  listed_email: string | null;
}

interface Pair {
  id: number;
  donor_id: number;
  other_donor_id: number;
  score: number;
  matched_on: string[];
}

interface Page {
  data: Pair[];
  next_cursor: string | null;
  previous_cursor: string | null;
}

let service: TestService;
let tenant: Tenant;

beforeAll(async () => {
  service = await startTestService();
  tenant = await service.createTenant('Property College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

const normal = (value: string) =>
  value
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .trim()
    .replace(/\s+/g, ' ');

const nameOf = (donor: Donor) => `${normal(donor.first_name ?? '')}|${normal(donor.last_name)}`;

/** The rule of docs and migration, for one pair of donors: null when they are no pair. */
function expected(a: Donor, b: Donor): { score: number; matched_on: string[] } | null {
  if (a.role !== b.role) return null;
  const name = nameOf(a) === nameOf(b);
  const email =
    a.listed_email !== null &&
    b.listed_email !== null &&
    a.listed_email.toLowerCase() === b.listed_email.toLowerCase();
  const digits = (phone: string | null) => phone?.replace(/\D/g, '') || null;
  const code = (postal: string | null) => postal?.replace(/[^a-z0-9]/gi, '').toLowerCase() || null;
  const phone = name && digits(a.phone) !== null && digits(a.phone) === digits(b.phone);
  const postal =
    name && code(a.postal_code) !== null && code(a.postal_code) === code(b.postal_code);
  const matched_on = [
    ...(email ? ['email'] : []),
    ...(name ? ['name'] : []),
    ...(phone ? ['phone'] : []),
    ...(postal ? ['postal_code'] : []),
  ];
  if (!matched_on.length) return null;
  return { score: email ? 100 : phone || postal ? 80 : 50, matched_on };
}

const donorArbitrary: fc.Arbitrary<Donor> = fc.record({
  role: fc.constantFrom('Individual' as const, 'Household' as const),
  first_name: fc.constantFrom('Ann', ' ann', 'Ánn', 'Bo'),
  last_name: fc.constantFrom('Lee', 'LÉE ', 'Li'),
  phone: fc.constantFrom(null, '555 0100', '(555) 0100', '555 0199'),
  postal_code: fc.constantFrom(null, '02139', '021-39', 'AB1 2CD'),
  listed_email: fc.constantFrom(null, 'x@example.org', 'X@Example.org', 'y@example.org'),
});

async function insertDonors(donors: Donor[]): Promise<number[]> {
  const rows = donors.map((donor) => ({
    role: donor.role,
    first_name: donor.role === 'Household' ? null : donor.first_name,
    last_name: donor.last_name,
    phone: donor.phone,
    address: donor.postal_code === null ? null : { postal_code: donor.postal_code },
    emails:
      donor.listed_email === null
        ? []
        : [{ address: donor.listed_email, type: 'home', status: 'active' }],
  }));
  const ids = await service.db.anyFirst(sql.unsafe`
    INSERT INTO donors (institution_id, role, first_name, last_name, phone, address, emails,
      status, gives_anonymously)
    SELECT ${tenant.institutionId}, r ->> 'role', r ->> 'first_name', r ->> 'last_name',
      r ->> 'phone', nullif(r -> 'address', 'null'), r -> 'emails', 'active', false
    FROM jsonb_array_elements(${sql.jsonb(rows)}) WITH ORDINALITY AS e (r, n)
    ORDER BY n
    RETURNING id`);
  return ids.map(Number).sort((x, y) => x - y);
}

async function walk(query: string, limit: number): Promise<{ forward: Pair[]; back: Pair[] }> {
  const get = async (url: string) => {
    const page = await service.call<Page>('GET', url, { key: tenant.key });
    expect(page.status).toBe(200);
    return page.body;
  };
  const forward: Pair[] = [];
  let page = await get(`/api/v1/duplicates?limit=${limit}${query}`);
  forward.push(...page.data);
  while (page.next_cursor) {
    page = await get(`/api/v1/duplicates?limit=${limit}&starting_after=${page.next_cursor}`);
    forward.push(...page.data);
  }
  const back: Pair[] = [];
  while (page.previous_cursor) {
    page = await get(`/api/v1/duplicates?limit=${limit}&ending_before=${page.previous_cursor}`);
    back.unshift(...page.data);
  }
  return { forward, back };
}

test('pairs follow the rule, and paging GET /duplicates never skips or repeats one', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(donorArbitrary, { minLength: 2, maxLength: 14 }),
      fc.integer({ min: 1, max: 6 }),
      fc.constantFrom(null, 0, 50, 80, 100),
      async (donors, limit, minScore) => {
        await service.db.query(
          sql.unsafe`DELETE FROM donors WHERE institution_id = ${tenant.institutionId}`,
        );
        const ids = await insertDonors(donors);
        const wanted: Omit<Pair, 'id'>[] = [];
        for (let i = 0; i < donors.length; i++)
          for (let j = i + 1; j < donors.length; j++) {
            const match = expected(
              {
                ...donors[i]!,
                first_name: donors[i]!.role === 'Household' ? null : donors[i]!.first_name,
              },
              {
                ...donors[j]!,
                first_name: donors[j]!.role === 'Household' ? null : donors[j]!.first_name,
              },
            );
            if (match) wanted.push({ donor_id: ids[i]!, other_donor_id: ids[j]!, ...match });
          }

        const { forward, back } = await walk(
          minScore === null ? '' : `&min_score=${minScore}`,
          limit,
        );
        const all = minScore === null ? forward : (await walk('', 100)).forward;
        const key = (pair: Omit<Pair, 'id'>) =>
          `${pair.donor_id}-${pair.other_donor_id}:${pair.score}:${pair.matched_on.join(',')}`;
        expect(all.map(key).sort()).toEqual(wanted.map(key).sort());

        const order = [...all]
          .filter((pair) => pair.score >= (minScore ?? 0))
          .sort((x, y) => y.score - x.score || y.id - x.id);
        expect(forward.map((pair) => pair.id)).toEqual(order.map((pair) => pair.id));
        expect(back.map((pair) => pair.id)).toEqual(
          order
            .slice(0, Math.max(0, order.length - (forward.length % limit || limit)))
            .map((pair) => pair.id),
        );
      },
    ),
    { numRuns: runs(25) },
  );
}, 120_000);
