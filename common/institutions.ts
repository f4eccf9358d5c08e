import { sql, type CommonQueryMethods, type DatabasePool, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { apiKeyColumns, apiKeyRowSchema, presentApiKey } from './apiKeys/schema.js';
import { generateApiKey } from './auth/apiKeys.js';
import { fullAccess, type Permissions } from './auth/permissions.js';
import type { JsonObject } from './json.js';
import { timestamp } from './resources/responseFields.js';

/** constituents.md §4: `opt_out` allows contact unless opted out; `opt_in` needs an opt-in. */
export const consentModes = ['opt_out', 'opt_in'] as const;
export type ConsentMode = (typeof consentModes)[number];

const institutionRow = z.object({
  id: z.number(),
  name: z.string(),
  currency: z.string(),
  fiscal_year_start_month: z.number(),
  consent_mode: z.enum(consentModes),
  created_at: z.string(),
});
export type InstitutionRow = z.infer<typeof institutionRow>;

const institutionColumns = sql.fragment`
  id, name, currency, fiscal_year_start_month, consent_mode, created_at`;

/** The caller's institution, as GET /institution, PATCH /institution and its event present it. */
export const institutionResponse = z.object({
  id: z.number().int().positive(),
  object: z.literal('institution'),
  name: z.string(),
  currency: z
    .string()
    .describe(
      'ISO 4217 code: the base currency, and the default currency of gifts, pledges and recurring gifts.',
    ),
  fiscal_year_start_month: z
    .number()
    .int()
    .min(1)
    .max(12)
    .describe(
      'The month (1–12) on whose first day a fiscal year starts. A fiscal year is named by the calendar year in which it ends: with 7, FY2027 runs 2026-07-01 to 2027-06-30.',
    ),
  consent_mode: z
    .enum(consentModes)
    .describe(
      '`opt_out`: a donor may be contacted on a channel unless opted out; `opt_in`: a channel needs an opt-in.',
    ),
  created_at: timestamp,
});

export const presentInstitution = (row: InstitutionRow): JsonObject => ({
  id: row.id,
  object: 'institution',
  name: row.name,
  currency: row.currency,
  fiscal_year_start_month: row.fiscal_year_start_month,
  consent_mode: row.consent_mode,
  created_at: row.created_at,
});

/** One institution; `lock` (`FOR UPDATE`) holds its row to the end of the transaction. */
export function findInstitution(
  db: CommonQueryMethods,
  id: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<InstitutionRow | null> {
  return db.maybeOne(sql.type(institutionRow)`
    SELECT ${institutionColumns} FROM institutions WHERE id = ${id} ${lock}`);
}

/** The settings PATCH /institution changes. */
export interface InstitutionSettings {
  currency: string;
  fiscal_year_start_month: number;
  consent_mode: ConsentMode;
}

export function updateInstitution(
  db: CommonQueryMethods,
  id: number,
  settings: InstitutionSettings,
): Promise<InstitutionRow> {
  return db.one(sql.type(institutionRow)`
    UPDATE institutions
    SET currency = ${settings.currency},
        fiscal_year_start_month = ${settings.fiscal_year_start_month},
        consent_mode = ${settings.consent_mode},
        updated_at = now()
    WHERE id = ${id}
    RETURNING ${institutionColumns}`);
}

/**
 * Whether the institution has a gift, a pledge or a recurring gift (fundraising.md §1), or an
 * exchange rate (each is stated in units of the base currency): its base currency is then fixed.
 */
export function holdsMoney(db: CommonQueryMethods, institutionId: number): Promise<boolean> {
  return db.oneFirst(sql.type(z.object({ holds: z.boolean() }))`
    SELECT EXISTS (SELECT FROM gifts WHERE institution_id = ${institutionId})
        OR EXISTS (SELECT FROM pledges WHERE institution_id = ${institutionId})
        OR EXISTS (SELECT FROM recurring_gifts WHERE institution_id = ${institutionId})
        OR EXISTS (SELECT FROM exchange_rates WHERE institution_id = ${institutionId}) AS holds`);
}

/** Operator actions (the admin CLI); tenants cannot reach these. */
export async function createInstitution(pool: DatabasePool, name: string, currency: string) {
  return pool.transaction(async (db) => {
    const institution = await db.one(sql.type(institutionRow)`
      INSERT INTO institutions (name, currency) VALUES (${name}, ${currency})
      RETURNING ${institutionColumns}`);
    const apiKey = await insertApiKey(db, institution.id);
    return { institution, apiKey };
  });
}

export interface NewApiKey {
  name?: string;
  /** Full access (`{"*":"write"}`) when absent: the operator's keys. */
  permissions?: Permissions;
}

export async function insertApiKey(
  db: CommonQueryMethods,
  institutionId: number,
  options: NewApiKey = {},
) {
  const generated = generateApiKey();
  await db.query(sql.unsafe`
    INSERT INTO api_keys (id, institution_id, secret_sha256, name, permissions)
    VALUES (${generated.id}, ${institutionId}, ${sql.binary(generated.digest)},
            ${options.name ?? 'Operator key'}, ${sql.jsonb(options.permissions ?? fullAccess)})`);
  return { id: generated.id, key: generated.key };
}

/** An institution's keys as GET /api-keys presents them (never a secret), newest first. */
export async function listApiKeys(db: CommonQueryMethods, institutionId: number) {
  const rows = await db.any(sql.type(apiKeyRowSchema)`
    SELECT ${apiKeyColumns} FROM api_keys
    WHERE institution_id = ${institutionId} ORDER BY seq DESC`);
  return rows.map(presentApiKey);
}

export function revokeApiKey(db: CommonQueryMethods, id: string) {
  return db.maybeOne(sql.type(z.object({ id: z.string(), revoked_at: z.string() }))`
    UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${id}
    RETURNING id, revoked_at`);
}
