import {
  sql,
  type CommonQueryMethods,
  type DatabasePool,
  type FragmentSqlToken,
  type ValueExpression,
} from 'slonik';
import { z } from 'zod';
import { findInstitution } from '../institutions.js';
import * as words from './vocabulary.js';

/**
 * Volume seeding: fills an existing institution with realistic donors, funds and gifts for load
 * tests and demos. Rows are made by PostgreSQL itself (INSERT … SELECT FROM generate_series), a
 * batch per statement, all in one transaction: a failed or interrupted seed leaves nothing
 * behind. Gifts go only to the donors and funds this run creates, so the giving totals of an
 * institution's real donors and funds are never touched.
 */

export interface SeedCounts {
  donors: number;
  gifts: number;
  funds: number;
}

export interface SeedOptions extends SeedCounts {
  institutionId: number;
  /** Called after every batch with the rows made so far. */
  onProgress?: (seeded: SeedCounts) => void;
}

class SeedError extends Error {}

/** Upper bound of every count: keeps the sequence numbers inside integer and a run finite. */
export const MAX_SEED_COUNT = 100_000_000;
export const DEFAULT_SEED_FUNDS = 10;

const DONOR_BATCH = 20_000;
const FUND_BATCH = 20_000;
const GIFT_BATCH = 50_000;
/** Gift dates run over the last five years, in step with their ids (newer gifts, later dates). */
const SPAN_DAYS = 5 * 365 + 1;

const textArray = (values: readonly string[]) => sql.array(values, 'text');
/** One element of a text array, chosen at random for every row. */
const pick = (values: readonly string[]) =>
  sql.fragment`(${textArray(values)})[1 + floor(random() * ${values.length}::int)::int]`;
/** Lower-case letters and digits only, for the local part of an email address. */
const slug = (expression: FragmentSqlToken) =>
  sql.fragment`regexp_replace(lower(${expression}), '[^a-z0-9]+', '', 'g')`;

function checkCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_SEED_COUNT) {
    throw new SeedError(`${name} must be an integer from 1 to ${MAX_SEED_COUNT}`);
  }
}

async function batches(
  total: number,
  size: number,
  run: (from: number, count: number) => Promise<void>,
): Promise<void> {
  for (let done = 0; done < total; done += size) {
    await run(done, Math.min(size, total - done));
  }
}

function insertDonors(
  db: CommonQueryMethods,
  institutionId: number,
  offset: number,
  count: number,
  userIds: readonly number[],
) {
  const users: ValueExpression = sql.array(userIds, 'int8');
  return db.query(sql.unsafe`
    WITH picked AS (
      SELECT
        nextval(pg_get_serial_sequence('donors', 'id')) AS id,
        CASE WHEN r < 0.70 THEN 'Individual' WHEN r < 0.82 THEN 'Household'
             WHEN r < 0.90 THEN 'Organization' WHEN r < 0.95 THEN 'Foundation'
             ELSE 'Corporation' END AS role,
        ${pick(words.firstNames)} AS first1,
        ${pick(words.firstNames)} AS first2,
        ${pick(words.lastNames)} AS last,
        ${pick(words.organizationStems)} AS stem,
        ${pick(words.organizationSuffixes)} AS organization_suffix,
        ${pick(words.foundationSuffixes)} AS foundation_suffix,
        ${pick(words.corporationSuffixes)} AS corporation_suffix,
        ${pick(words.streets)} AS street,
        ${pick(words.emailDomains)} AS domain,
        1 + floor(random() * ${words.cities.length}::int)::int AS city,
        random() AS r_status, random() AS r_email, random() AS r_phone, random() AS r_address,
        random() AS r_user, random() AS r_anonymous
      FROM (SELECT random() AS r FROM generate_series(1, ${count}::int)) AS draw
    ),
    named AS (
      SELECT picked.*,
        CASE role WHEN 'Individual' THEN first1
                  WHEN 'Household' THEN first1 || ' and ' || first2 END AS first_name,
        CASE WHEN role IN ('Individual', 'Household') THEN last END AS last_name,
        CASE role WHEN 'Household' THEN 'The ' || last || ' Family'
                  WHEN 'Organization' THEN stem || ' ' || organization_suffix
                  WHEN 'Foundation' THEN last || ' ' || foundation_suffix
                  WHEN 'Corporation' THEN stem || ' ' || corporation_suffix END
          AS organization_name
      FROM picked
    ),
    inserted AS (
      INSERT INTO donors (id, institution_id, role, first_name, last_name, organization_name,
                          email, phone, address, assigned_user_id, status, gives_anonymously)
      OVERRIDING SYSTEM VALUE
      SELECT id, ${institutionId}::int8, role, first_name, last_name, organization_name,
        -- The id makes every address unique, in this institution and in any other.
        CASE WHEN r_email < 0.9 THEN
          CASE role WHEN 'Individual'
                      THEN ${slug(sql.fragment`first_name`)} || '.' || ${slug(sql.fragment`last_name`)}
                    WHEN 'Household' THEN ${slug(sql.fragment`last_name`)} || '.family'
                    ELSE 'giving.' || ${slug(sql.fragment`stem`)} END
          || '.' || id || '@' || domain END,
        CASE WHEN r_phone < 0.6 THEN format('+1 %s-555-%s', 201 + floor(random() * 780)::int,
                                            lpad(floor(random() * 10000)::int::text, 4, '0')) END,
        CASE WHEN r_address < 0.55 THEN jsonb_build_object(
          'line1', (1 + floor(random() * 9899))::int || ' ' || street,
          'city', (${textArray(words.cities)})[city],
          'region', (${textArray(words.regions)})[city],
          'postal_code', lpad(floor(random() * 100000)::int::text, 5, '0'),
          'country', 'US') END,
        CASE WHEN cardinality(${users}::int8[]) > 0 AND r_user < 0.3
             THEN (${users}::int8[])[1 + floor(random() * cardinality(${users}::int8[]))::int] END,
        CASE WHEN r_status < 0.9 THEN 'active'
             WHEN role = 'Individual' AND r_status < 0.95 THEN 'deceased'
             ELSE 'inactive' END,
        r_anonymous < 0.04
      FROM named
      RETURNING id
    )
    INSERT INTO seed_donors (n, id)
    SELECT ${offset}::int + row_number() OVER (ORDER BY id), id FROM inserted`);
}

function insertFunds(db: CommonQueryMethods, institutionId: number, offset: number, count: number) {
  return db.query(sql.unsafe`
    WITH picked AS (
      SELECT
        nextval(pg_get_serial_sequence('funds', 'id')) AS id,
        ${offset}::int + n AS n,
        ${pick(words.fundAreas)} AS area,
        ${pick(words.fundKinds)} AS kind,
        ${pick(words.lastNames)} AS last,
        random() AS r_name, random() AS r_restriction, random() AS r_endowed,
        random() AS r_limit, random() AS r_status, random() AS r_description
      FROM generate_series(1, ${count}::int) AS n
    ),
    shaped AS (
      SELECT picked.*,
        CASE WHEN r_restriction < 0.5 THEN 'unrestricted'
             WHEN r_restriction < 0.8 THEN 'temporarily_restricted'
             ELSE 'permanently_restricted' END AS restriction
      FROM picked
    ),
    inserted AS (
      INSERT INTO funds (id, institution_id, name, code, description, restriction, endowed,
                         award_limit, status)
      OVERRIDING SYSTEM VALUE
      SELECT id, ${institutionId}::int8,
        CASE WHEN r_name < 0.35 THEN last || ' Family ' || area || ' ' || kind
             ELSE area || ' ' || kind END,
        -- The id keeps codes unique within the institution.
        upper(left(regexp_replace(area, '[^A-Za-z]+', '', 'g'), 4)) || '-' || id,
        CASE WHEN r_description < 0.6 THEN 'Supports ' || lower(area) || ' (' || lower(kind) || ').' END,
        restriction,
        restriction = 'permanently_restricted' OR r_endowed < 0.1,
        CASE WHEN r_limit < 0.6 THEN round((5000 + random() * 495000)::numeric, -2) END,
        -- The first fund of a run is always active, so that gifts have somewhere to go.
        CASE WHEN n = 1 OR r_status < 0.9 THEN 'active' ELSE 'closed' END
      FROM shaped
      RETURNING id, status
    )
    INSERT INTO seed_funds (n, id)
    SELECT (SELECT count(*) FROM seed_funds) + row_number() OVER (ORDER BY id), id
    FROM inserted WHERE status = 'active'`);
}

function insertGifts(
  db: CommonQueryMethods,
  institution: { id: number; currency: string },
  from: number,
  count: number,
  total: number,
  pools: { donors: number; funds: number },
) {
  return db.query(sql.unsafe`
    WITH picked AS (
      SELECT g,
        -- Skewed: a few donors give often, many give once or never.
        1 + floor(power(random(), 2) * ${pools.donors}::int)::int AS donor_n,
        CASE WHEN random() < 0.75 THEN 1 + floor(random() * ${pools.funds}::int)::int END AS fund_n,
        ${pick(words.giftSubjects)} AS subject,
        least(current_date, greatest(current_date - ${SPAN_DAYS}::int,
          current_date - ${SPAN_DAYS}::int
            + floor((g - 1) * ${SPAN_DAYS}::float8 / ${total}::int + (random() - 0.5) * 14)::int))
          AS gift_date,
        random() AS r_type, random() AS r_amount, random() AS r_round
      FROM generate_series(${from + 1}::int, ${from + count}::int) AS g
    ),
    typed AS (
      SELECT picked.*,
        CASE WHEN r_type < 0.25 THEN 'cash' WHEN r_type < 0.45 THEN 'check'
             WHEN r_type < 0.75 THEN 'credit_card' WHEN r_type < 0.85 THEN 'bank_transfer'
             WHEN r_type < 0.89 THEN 'stock' WHEN r_type < 0.92 THEN 'in_kind'
             WHEN r_type < 0.98 THEN 'pledge' ELSE 'other' END AS type,
        -- $10 to $50,000, most of them small; stock, in-kind and pledges run larger.
        exp(ln(10) + power(r_amount, 1.8) * ln(5000)) AS raw_amount
      FROM picked
    )
    INSERT INTO gifts (institution_id, donor_id, amount, currency, exchange_rate, base_amount,
                       subject, gift_date, type, check_number, designations, fund_ids)
    SELECT ${institution.id}::int8, donor.id, amount, ${institution.currency}, 1, amount,
      subject || ' ' || extract(year FROM gift_date)::int, gift_date, type,
      CASE WHEN type = 'check' THEN (1001 + floor(random() * 98999))::int::text END,
      CASE WHEN fund.id IS NULL THEN '[]'::jsonb
           ELSE jsonb_build_array(jsonb_build_object(
             'fund_id', fund.id, 'amount', amount, 'amount_refunded', 0,
             'base_amount', amount, 'base_amount_refunded', 0)) END,
      CASE WHEN fund.id IS NULL THEN '{}'::int8[] ELSE ARRAY[fund.id] END
    FROM (SELECT typed.*,
            CASE WHEN r_round < 0.4
                 THEN greatest(5, round((raw_amount * scale)::numeric / 5) * 5)
                 ELSE round((raw_amount * scale)::numeric, 2) END AS amount
          FROM (SELECT typed.*, CASE WHEN type IN ('stock', 'in_kind', 'pledge') THEN 4 ELSE 1 END
                  AS scale FROM typed) AS typed) AS shaped
    JOIN seed_donors AS donor ON donor.n = shaped.donor_n
    LEFT JOIN seed_funds AS fund ON fund.n = shaped.fund_n
    ORDER BY g`);
}

export async function seedInstitution(
  pool: DatabasePool,
  options: SeedOptions,
): Promise<SeedCounts> {
  checkCount('donors', options.donors);
  checkCount('gifts', options.gifts);
  checkCount('funds', options.funds);
  const institution = await findInstitution(pool, options.institutionId);
  if (!institution) throw new SeedError(`No institution with id ${options.institutionId}`);

  const seeded: SeedCounts = { donors: 0, gifts: 0, funds: 0 };
  const report = () => options.onProgress?.({ ...seeded });
  report();
  await pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`
      CREATE TEMP TABLE seed_donors (n integer PRIMARY KEY, id bigint NOT NULL) ON COMMIT DROP`);
    await tx.query(sql.unsafe`
      CREATE TEMP TABLE seed_funds (n integer PRIMARY KEY, id bigint NOT NULL) ON COMMIT DROP`);
    const userIds = (
      await tx.anyFirst(sql.type(z.object({ id: z.number() }))`
        SELECT id FROM users WHERE institution_id = ${institution.id} AND status = 'active'`)
    ).map(Number);

    await batches(options.donors, DONOR_BATCH, async (from, count) => {
      await insertDonors(tx, institution.id, from, count, userIds);
      seeded.donors += count;
      report();
    });
    await batches(options.funds, FUND_BATCH, async (from, count) => {
      await insertFunds(tx, institution.id, from, count);
      seeded.funds += count;
      report();
    });
    // Temporary tables are never analysed automatically; the gift joins need their sizes.
    await tx.query(sql.unsafe`ANALYZE seed_donors, seed_funds`);
    const activeFunds = Number(
      await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM seed_funds`),
    );
    const poolSizes = { donors: options.donors, funds: activeFunds };

    await batches(options.gifts, GIFT_BATCH, async (from, count) => {
      await insertGifts(tx, institution, from, count, options.gifts, poolSizes);
      seeded.gifts += count;
      report();
    });
  });
  // Fresh statistics, so that the planner sees the new volume at once.
  await pool.query(sql.unsafe`ANALYZE donors, funds, gifts`);
  return seeded;
}
