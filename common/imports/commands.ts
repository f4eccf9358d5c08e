import { sql, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { lockClause, pathId, type Command, type CommandContext } from '../commands/command.js';
import { errors } from '../errors.js';
import { validateBody } from '../validation/validateBody.js';
import { findFile, findImport, importColumns } from './queries.js';
import {
  importModes,
  importResources,
  importRow,
  onMatchChoices,
  presentImport,
} from './schema.js';
import type { ImportRow, ImportStatus } from './schema.js';
import { amountCents, centsText } from './columns.js';

/**
 * What the API sends the worker once a file is stored (api/importUpload.ts): the file and the
 * choices of the query string, already checked there. Internal: no client writes this body.
 */
export const importCreateBody = z.object({
  file_id: z.number().int().positive(),
  resource: z.enum(importResources),
  mode: z.enum(importModes),
  on_match: z.enum(onMatchChoices),
  dry_run: z.boolean(),
  expected_rows: z.number().int().min(0).nullable(),
  expected_amount: z.string().nullable(),
  request_id: z.string(),
  api_key_id: z.string(),
});
export type ImportCreateBody = z.infer<typeof importCreateBody>;

const location = (id: number) => `/api/v1/imports/${id}`;

/** The control totals that do not match the file: the import fails before any row is judged. */
function controlTotalProblem(
  body: ImportCreateBody,
  file: { rows_total: number; amount_total: string | null },
): string | null {
  if (body.expected_rows !== null && body.expected_rows !== file.rows_total)
    return `expected_rows is ${body.expected_rows} but the file has ${file.rows_total} rows.`;
  if (body.expected_amount !== null) {
    const expected = amountCents(body.expected_amount);
    const actual = amountCents(file.amount_total ?? '0') ?? 0n;
    if (expected !== actual)
      return `expected_amount is ${body.expected_amount} but the rows' amounts add up to ${centsText(actual)}.`;
  }
  return null;
}

/**
 * POST /imports, the worker's half: the import of a stored file, `queued` for the workers' sweep
 * (or `failed` at once when a control total does not match). Answered 202.
 */
export const createImport: Command = {
  name: 'imports.create',
  constraints: {
    imports_file_key: () => errors.invalidParameter('file', 'This upload already has an import.'),
  },
  async execute(ctx, request) {
    const body = importCreateBody.parse(request.body);
    const file = await findFile(ctx.db, ctx.institution.id, body.file_id);
    if (!file) throw errors.internal();
    const chunks = await ctx.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      SELECT count(*)::int AS count FROM import_chunks
      WHERE institution_id = ${ctx.institution.id} AND file_id = ${file.id}`);
    const problem = controlTotalProblem(body, file);
    const status: ImportStatus = problem ? 'failed' : 'queued';
    const values = {
      file_id: file.id,
      resource: body.resource,
      mode: body.mode,
      on_match: body.on_match,
      dry_run: body.dry_run,
      status,
      chunks_total: chunks,
      rows_total: file.rows_total,
      amount_total: file.amount_total,
      expected_rows: body.expected_rows,
      expected_amount: body.expected_amount,
      failure_code: problem ? ('control_total_mismatch' as const) : null,
      failure_message: problem,
      request_id: body.request_id,
      api_key_id: body.api_key_id,
    };
    const row: ImportRow = ctx.dryRun
      ? {
          ...values,
          id: 0,
          institution_id: ctx.institution.id,
          rows_processed: 0,
          rows_succeeded: 0,
          rows_failed: 0,
          rows_skipped: 0,
          created_at: ctx.now,
          updated_at: ctx.now,
          completed_at: problem ? ctx.now : null,
        }
      : await ctx.db.one(sql.type(importRow)`
          INSERT INTO imports (institution_id, file_id, resource, mode, on_match, dry_run, status,
                               chunks_total, rows_total, amount_total, expected_rows,
                               expected_amount, failure_code, failure_message, request_id,
                               api_key_id, completed_at)
          VALUES (${ctx.institution.id}, ${file.id}, ${body.resource}, ${body.mode},
                  ${body.on_match}, ${body.dry_run}, ${status}, ${chunks}, ${file.rows_total},
                  ${file.amount_total}::numeric, ${body.expected_rows},
                  ${body.expected_amount}::numeric, ${values.failure_code},
                  ${values.failure_message}, ${body.request_id}, ${body.api_key_id},
                  ${problem ? sql.fragment`now()` : null})
          RETURNING ${importColumns}`);
    return { status: 202, body: presentImport(row), location: location(row.id) };
  },
};

/** The import a commit or cancel names, locked for the real write; 404 when not the caller's. */
async function targetImport(
  ctx: CommandContext,
  request: { params: Record<string, string>; body: Record<string, unknown> },
): Promise<ImportRow> {
  const id = pathId({ params: request.params, body: {} });
  const found = id ? await findImport(ctx.db, ctx.institution.id, id, lockClause(ctx)) : null;
  if (!found) throw errors.notFound('import');
  // Neither takes a field: the body is `{}`.
  const validation = validateBody({}, request.body);
  if (validation.errors.length) throw errors.validationFailed(validation.errors);
  return found;
}

const setStatus = async (
  ctx: CommandContext,
  found: ImportRow,
  change: FragmentSqlToken,
): Promise<ImportRow> =>
  ctx.db.one(sql.type(importRow)`
    UPDATE imports SET ${change}, updated_at = now()
    WHERE institution_id = ${ctx.institution.id} AND id = ${found.id}
    RETURNING ${importColumns}`);

/** POST /imports/{id}/commit: a validated dry run is imported, without uploading it again. */
export const commitImport: Command = {
  name: 'imports.commit',
  async execute(ctx, request) {
    const found = await targetImport(ctx, request);
    if (found.status !== 'validated')
      throw errors.invalidStateTransition(
        'status',
        `Only a validated dry run can be committed; this import is ${found.status}.`,
      );
    const row = ctx.dryRun
      ? {
          ...found,
          status: 'importing' as const,
          rows_processed: 0,
          rows_succeeded: 0,
          rows_skipped: 0,
          completed_at: null,
          updated_at: ctx.now,
        }
      : await setStatus(
          ctx,
          found,
          sql.fragment`status = 'importing', rows_processed = 0, rows_succeeded = 0,
                       rows_skipped = 0, completed_at = NULL`,
        );
    return { status: 200, body: presentImport(row) };
  },
};

const cancellable: readonly ImportStatus[] = ['queued', 'validating', 'validated', 'importing'];

/**
 * POST /imports/{id}/cancel: the import stops between chunks. What committed stays: the answer
 * says how far it got.
 */
export const cancelImport: Command = {
  name: 'imports.cancel',
  async execute(ctx, request) {
    const found = await targetImport(ctx, request);
    if (!cancellable.includes(found.status))
      throw errors.invalidStateTransition(
        'status',
        `This import is ${found.status} already; only an unfinished import can be cancelled.`,
      );
    const message =
      found.status === 'importing'
        ? `Cancelled while importing, after ${found.rows_processed} of ${found.rows_total} rows (${found.rows_succeeded} written).`
        : `Cancelled while ${found.status}; no row was written.`;
    const row = ctx.dryRun
      ? {
          ...found,
          status: 'cancelled' as const,
          failure_code: 'cancelled' as const,
          failure_message: message,
          completed_at: ctx.now,
          updated_at: ctx.now,
        }
      : await setStatus(
          ctx,
          found,
          sql.fragment`status = 'cancelled', failure_code = 'cancelled',
                       failure_message = ${message}, completed_at = now()`,
        );
    return { status: 200, body: presentImport(row) };
  },
};

export const importCommands: readonly Command[] = [createImport, commitImport, cancelImport];
