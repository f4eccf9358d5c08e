import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import pg from 'pg';
import { startTestService, type TestService } from './helpers/harness.js';
import { runs } from './helpers/propertyRuns.js';

/**
 * The match keys are stored: the key functions of migration 1735100000000, written for speed,
 * must give exactly what those of 1735030000000 gave, or keys written before and after it would
 * stop matching each other. The first definitions are read from their migration as they stand
 * and created as temporary functions beside the current ones, then both are run over many
 * names (any Unicode, accents composed and not, punctuation, every kind of space, empty, null)
 * and donors.
 */

let service: TestService;
let client: pg.Client;

/** A function of the first migration, renamed into pg_temp with the others it calls. */
function firstDefinition(source: string, name: string): string {
  const match = new RegExp(`CREATE FUNCTION ${name}\\(.*?\\n\\$\\$;`, 's').exec(source);
  if (!match) throw new Error(`${name} is not in the first migration`);
  return match[0]
    .replace(/\b(match_text|match_name|donor_match_keys_of)\(/g, 'pg_temp.first_$1(')
    .replace(/\(d donors\)/, '(d public.donors)');
}

beforeAll(async () => {
  service = await startTestService();
  // One session throughout: temporary functions live in the session that made them.
  client = new pg.Client({
    connectionString: service.config.DATABASE_MIGRATION_URL ?? service.config.DATABASE_URL,
  });
  await client.connect();
  const source = readFileSync(
    new URL('../migrations/1735030000000_duplicate-pairs.sql', import.meta.url),
    'utf8',
  );
  for (const name of ['match_text', 'match_name', 'donor_match_keys_of'])
    await client.query(firstDefinition(source, name));
});

afterAll(async () => {
  await client?.end();
  await service?.close();
});

/** Characters the normalisation treats specially, mixed into any others. */
const special = fc.constantFrom(
  ' ',
  '  ',
  '\t',
  '\n',
  '\r',
  '\v',
  '\f',
  '\u0085',
  '\u00a0',
  '\u1680',
  '\u180e',
  '\u2003',
  '\u2007',
  '\u200b',
  '\u2028',
  '\u2029',
  '\u202f',
  '\u3000',
  '\ufeff',
  'é',
  'e\u0301',
  'Å',
  'ǅ',
  'ß',
  'İ',
  'ı',
  'ﬁ',
  '①',
  'Ⅻ',
  'Ｗ',
  '\u0338',
  '\u036f',
  '\u0370',
  '\u1ab0',
  '\u20d0',
  'ñ',
  'Ø',
  'Ω',
  'Σ',
  'ς',
  '한',
  '日本',
  '😀',
  "'",
  '-',
  '.',
  ',',
  '(',
  '+',
  '#',
  '0',
  '9',
  '٣',
  'A',
  'z',
);

/** No NUL: PostgreSQL text cannot hold it. */
const text = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 12 }),
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.string({ unit: 'binary-ascii', maxLength: 12 }),
    fc
      .array(fc.oneof(special, fc.string({ unit: 'grapheme-ascii', maxLength: 3 })), {
        maxLength: 8,
      })
      .map((parts) => parts.join('')),
    fc.constant(''),
  )
  .map((value) => value.replaceAll('\u0000', ''));

const nullable = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });

test('match_text gives what the first one gave, for any text', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(nullable(text), { minLength: 1, maxLength: 50 }), async (values) => {
      const { rows } = await client.query<{
        value: string | null;
        first: string | null;
        now: string | null;
      }>(
        `SELECT value, pg_temp.first_match_text(value) AS first, match_text(value) AS now
         FROM jsonb_array_elements_text($1::jsonb) AS value`,
        [JSON.stringify(values)],
      );
      expect(rows).toHaveLength(values.length);
      for (const row of rows)
        expect({ value: row.value, key: row.now }).toEqual({
          value: row.value,
          key: row.first,
        });
    }),
    { numRuns: runs(200) },
  );
}, 120_000);

const phone = fc.oneof(text, fc.constantFrom('+44 20 7946 0001', '(555) 0100', '555-0100'));
const postalCode = fc.oneof(text, fc.constantFrom('SW1Y 4AA', 'sw1y4aa', '021-39', '٠٢١٣٩'));
const email = fc.oneof(text, fc.constantFrom('Ada@Example.org', ' ada@example.org ', ''));

const donorArbitrary = fc.record({
  role: fc.constantFrom('Individual', 'Household', 'Organization', 'Foundation', 'Corporation'),
  first_name: nullable(text),
  last_name: nullable(text),
  organization_name: nullable(text),
  email: nullable(email),
  phone: nullable(phone),
  address: nullable(fc.oneof(fc.record({ postal_code: nullable(postalCode) }), fc.constant({}))),
  emails: fc.array(fc.record({ address: nullable(email), type: fc.constant('home') }), {
    maxLength: 3,
  }),
  phones: fc.array(fc.record({ number: nullable(phone), type: fc.constant('home') }), {
    maxLength: 3,
  }),
  addresses: fc.array(fc.record({ postal_code: nullable(postalCode) }), { maxLength: 3 }),
  status: fc.constantFrom('active', 'inactive', 'deceased'),
});

test('donor_match_keys_of gives the keys the first one gave, for any donor', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(donorArbitrary, { minLength: 1, maxLength: 20 }), async (donors) => {
      const { rows } = await client.query<{ n: string; first: string[]; now: string[] }>(
        `SELECT n,
           ARRAY(SELECT basis || ':' || value FROM pg_temp.first_donor_match_keys_of(d)
             ORDER BY 1) AS first,
           ARRAY(SELECT basis || ':' || value FROM donor_match_keys_of(d) ORDER BY 1) AS now
         FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e (r, n),
           LATERAL jsonb_populate_record(NULL::donors, r) AS d`,
        [JSON.stringify(donors)],
      );
      expect(rows).toHaveLength(donors.length);
      for (const row of rows)
        expect({ n: row.n, keys: row.now }).toEqual({ n: row.n, keys: row.first });
    }),
    { numRuns: runs(100) },
  );
}, 120_000);
