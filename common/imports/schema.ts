import { z } from 'zod';
import type { JsonObject } from '../json.js';
import { duplicateCandidateResponse } from '../resources/duplicates/response.js';
import { MAX_IMPORT_ROW_CANDIDATES } from '../resources/duplicates/schema.js';
import { moneyAmount, recordIdOf, timestamp } from '../resources/responseFields.js';

/** What an import's rows are records of. */
export const importResources = ['donors', 'gifts'] as const;
export type ImportResource = (typeof importResources)[number];

export const importModes = ['skip_invalid', 'all_or_nothing'] as const;
export const onMatchChoices = ['skip', 'update', 'error'] as const;

/**
 * queued → validating → (validated, for a dry run | importing → completed) or failed; any of the
 * unfinished ones → cancelled.
 */
export const importStatuses = [
  'queued',
  'validating',
  'validated',
  'importing',
  'completed',
  'failed',
  'cancelled',
] as const;
export type ImportStatus = (typeof importStatuses)[number];

/** Why an import ended `failed` or `cancelled`: its `failure.code`. */
export const importFailureCodes = [
  'control_total_mismatch',
  'invalid_rows',
  'api_key_revoked',
  'cancelled',
] as const;
export type ImportFailureCode = (typeof importFailureCodes)[number];

/** The statuses an import still moves on from by itself (the workers' sweep finds these). */
export const runningStatuses: readonly ImportStatus[] = ['queued', 'validating', 'importing'];

export const importIdentity = {
  name: 'imports',
  object: 'import',
  label: 'import',
  path: '/imports',
} as const;

export const importRow = z.object({
  id: z.number(),
  institution_id: z.number(),
  file_id: z.number(),
  resource: z.enum(importResources),
  mode: z.enum(importModes),
  on_match: z.enum(onMatchChoices),
  dry_run: z.boolean(),
  status: z.enum(importStatuses),
  chunks_total: z.number(),
  rows_total: z.number(),
  rows_processed: z.number(),
  rows_succeeded: z.number(),
  rows_failed: z.number(),
  rows_skipped: z.number(),
  amount_total: z.string().nullable(),
  expected_rows: z.number().nullable(),
  expected_amount: z.string().nullable(),
  failure_code: z.enum(importFailureCodes).nullable(),
  failure_message: z.string().nullable(),
  request_id: z.string(),
  api_key_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  completed_at: z.string().nullable(),
});
export type ImportRow = z.infer<typeof importRow>;

const count = (text: string) => z.number().int().min(0).describe(text);

/** The import object of integration.md §3. */
export const importResponse = z.object({
  id: recordIdOf('import'),
  object: z.literal('import'),
  resource: z.enum(importResources).describe('What the rows are: `donors` or `gifts`.'),
  status: z
    .enum(importStatuses)
    .describe(
      '`queued` → `validating` → `validated` (a dry run) or `importing` → `completed`; `failed` (all_or_nothing with bad rows, control totals that do not match, or the API key that created it revoked); `cancelled`.',
    ),
  mode: z.enum(importModes),
  on_match: z.enum(onMatchChoices),
  dry_run: z.boolean().describe('Validated only, until `POST /imports/{id}/commit`.'),
  rows_total: count('Data rows in the file (the header aside).'),
  rows_processed: count(
    'Rows judged so far while validating; rows written so far while importing.',
  ),
  rows_succeeded: count('Rows valid (validating) or written (importing and after).'),
  rows_failed: count('Rows with errors: see `GET /imports/{id}/errors`.'),
  rows_skipped: count('Donor rows that matched an existing donor under `on_match` `skip`.'),
  amount_total: moneyAmount
    .nullable()
    .describe('Gifts: the sum of the rows’ `amount` as sent (rows whose amount is a number).'),
  expected_rows: z.number().int().nullable(),
  expected_amount: moneyAmount.nullable(),
  failure: z
    .object({
      code: z
        .enum(importFailureCodes)
        .describe(
          '`control_total_mismatch`: `expected_rows` or `expected_amount` is not the file’s (nothing was judged). `invalid_rows`: `all_or_nothing` and some rows have errors (nothing was written). `api_key_revoked`: the API key that created the import was revoked while it ran; the chunks committed before stay, and no chunk commits after (the message says how far it got). `cancelled`: `POST /imports/{id}/cancel`.',
        ),
      message: z.string(),
    })
    .nullable()
    .describe('Why the import failed or where a cancel stopped it; null otherwise.'),
  created_at: timestamp,
  updated_at: timestamp,
  completed_at: timestamp
    .nullable()
    .describe('When it reached `validated`, `completed`, `failed` or `cancelled`.'),
});

export function presentImport(row: ImportRow): JsonObject {
  return {
    id: row.id,
    object: 'import',
    resource: row.resource,
    status: row.status,
    mode: row.mode,
    on_match: row.on_match,
    dry_run: row.dry_run,
    rows_total: row.rows_total,
    rows_processed: row.rows_processed,
    rows_succeeded: row.rows_succeeded,
    rows_failed: row.rows_failed,
    rows_skipped: row.rows_skipped,
    amount_total: row.amount_total === null ? null : Number(row.amount_total),
    expected_rows: row.expected_rows,
    expected_amount: row.expected_amount === null ? null : Number(row.expected_amount),
    failure:
      row.failure_code && row.failure_message
        ? { code: row.failure_code, message: row.failure_message }
        : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
    completed_at: row.completed_at,
  };
}

/** A row's errors kept at most, as a 422 lists at most this many. */
export const MAX_ROW_ERRORS = 100;

/** One failed row, as `GET /imports/{id}/errors` lists it. */
export const importRowErrorResponse = z.object({
  object: z.literal('import_row_error'),
  row: z.number().int().min(2).describe('The row number in the file; the header is row 1.'),
  errors: z
    .array(
      z.object({
        param: z.string().nullable(),
        code: z.string(),
        message: z.string(),
      }),
    )
    .max(MAX_ROW_ERRORS)
    .describe(
      'Every problem of the row (the first 100), with the codes and params of the single-record write.',
    ),
});

/** One donor row of an import written with candidates, as `GET /imports/{id}/duplicates` lists it. */
export const importRowDuplicatesResponse = z.object({
  object: z.literal('import_row_duplicates'),
  row: z.number().int().min(2).describe('The row number in the file; the header is row 1.'),
  donor_id: z.number().int().positive().describe('The donor the row created or updated.'),
  candidates: z
    .array(duplicateCandidateResponse)
    .max(MAX_IMPORT_ROW_CANDIDATES)
    .describe(
      'The donor’s candidates as they are now (the first 20, highest score first; `GET /donors/{id}/duplicates` lists them all): empty once every pair is dismissed or no longer matches.',
    ),
});
export type ImportRowDuplicatesResponse = z.infer<typeof importRowDuplicatesResponse>;
