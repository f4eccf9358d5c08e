import { createHash, type Hash } from 'node:crypto';
import { Readable, pipeline } from 'node:stream';
import type { Request, RequestHandler } from 'express';
import { parse } from 'csv-parse';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { WriteJob } from '../common/commands/runWrite.js';
import type { Config } from '../common/config.js';
import { ApiError, errors, type FieldError } from '../common/errors.js';
import { fingerprintOf } from '../common/idempotency/fingerprint.js';
import {
  amountCents,
  centsText,
  headerProblems,
  MAX_TOTAL_CENTS,
} from '../common/imports/columns.js';
import { createImport, type ImportCreateBody } from '../common/imports/commands.js';
import { deleteUnclaimedFile } from '../common/imports/queries.js';
import {
  importModes,
  importResources,
  onMatchChoices,
  type ImportResource,
} from '../common/imports/schema.js';
import { isJsonObject, type JsonValue } from '../common/json.js';
import { JsonRowsSplitter } from './jsonRows.js';
import { hasBody, parseDryRun, parseIdempotencyKey, rejectUnknownQuery } from './requestParsing.js';
import type { WriteGateway } from './writeGateway.js';

/**
 * POST /imports: the one write whose body is a file, not a JSON object. The file is streamed
 * into PostgreSQL as it arrives (import_files and its chunks: never whole in memory, never in
 * Redis), judged only as a file here (UTF-8, CSV syntax, header, size and row limits); then the
 * import itself is created as every write is, through the queue and a worker, under the
 * request's Idempotency-Key. Its rows are judged by the workers (common/imports/chunks.ts).
 */
export interface UploadDeps {
  pool: DatabasePool;
  gateway: WriteGateway;
  config: Pick<Config, 'IMPORT_MAX_BYTES' | 'IMPORT_MAX_ROWS' | 'IMPORT_CHUNK_ROWS'>;
}

/**
 * A CSV wider than this is no spreadsheet of donors or gifts; nor is a JSON file whose rows name
 * more distinct keys than this (its keys are the columns of errors.csv: each failed row is
 * written out once per column, on the API's event loop).
 */
const MAX_COLUMNS = 200;
/** One row's text at most (a quote that never closes would otherwise swallow the file). */
const MAX_ROW_CHARACTERS = 1_000_000;

const fileProblem = (message: string, param = 'file'): ApiError =>
  errors.validationFailed([{ param, code: 'invalid_format', message } satisfies FieldError]);

const tooLarge = (message: string) =>
  new ApiError(413, { type: 'invalid_request_error', code: 'payload_too_large', message });

const mediaProblem = () =>
  new ApiError(415, {
    type: 'invalid_request_error',
    code: 'unsupported_media_type',
    message:
      'Send the file as Content-Type: text/csv (a header row, then one row per record) or application/json ({"rows": [{...}]}).',
  });

function oneOf<T extends string>(req: Request, name: string, values: readonly T[], fallback?: T) {
  const raw = req.query[name];
  if (raw === undefined) {
    if (fallback !== undefined) return fallback;
    throw errors.parameterMissing(name);
  }
  if (typeof raw !== 'string' || !values.includes(raw as T))
    throw errors.invalidParameter(name, `${name} must be one of: ${values.join(', ')}.`);
  return raw as T;
}

function controlTotals(req: Request) {
  const rows = req.query.expected_rows;
  const amount = req.query.expected_amount;
  if (rows !== undefined && (typeof rows !== 'string' || !/^\d{1,9}$/.test(rows)))
    throw errors.invalidParameter('expected_rows', 'expected_rows must be a whole number of rows.');
  const cents = typeof amount === 'string' ? amountCents(amount) : null;
  if (amount !== undefined && cents === null)
    throw errors.invalidParameter(
      'expected_amount',
      'expected_amount must be an amount with at most 2 decimal places, such as 12500.50.',
    );
  if (cents !== null && cents > MAX_TOTAL_CENTS)
    throw errors.invalidParameter(
      'expected_amount',
      `expected_amount must be at most ${centsText(MAX_TOTAL_CENTS)}.`,
    );
  return {
    expected_rows: rows === undefined ? null : Number(rows),
    expected_amount: cents === null ? null : centsText(cents),
  };
}

/** The request's bytes as UTF-8 text, counted against the limit and hashed on the way. */
async function* textOf(
  req: Request,
  maxBytes: number,
  hash: Hash,
  counted: { bytes: number },
): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for await (const piece of req as AsyncIterable<Buffer>) {
    counted.bytes += piece.length;
    if (counted.bytes > maxBytes)
      throw tooLarge(`The file is larger than ${maxBytes} bytes (IMPORT_MAX_BYTES).`);
    hash.update(piece);
    try {
      yield decoder.decode(piece, { stream: true });
    } catch {
      throw fileProblem('is not UTF-8 text.');
    }
  }
  try {
    const rest = decoder.decode();
    if (rest) yield rest;
  } catch {
    throw fileProblem('is not UTF-8 text.');
  }
}

/** What csv-parse reports, as the client's problem with its file. */
function csvProblem(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const { code, lines, message } = error as { code?: string; lines?: number; message?: string };
  const at = lines ? ` (line ${lines})` : '';
  switch (code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return fileProblem(`has a quoted field that is never closed${at}.`);
    case 'CSV_MAX_RECORD_SIZE':
      return fileProblem(`has a row longer than ${MAX_ROW_CHARACTERS} characters${at}.`);
    case undefined:
      throw error;
    default:
      return fileProblem(`is not valid CSV${at}: ${String(message).slice(0, 200)}`);
  }
}

interface Staged {
  id: number;
  columns: string[];
  rows: number;
  amountCents: bigint | null;
  bytes: number;
  sha256: string;
}

/** Stores rows into the staged file in chunks, as they come. */
class ChunkWriter {
  private buffer: JsonValue[] = [];
  private chunk = 0;
  rows = 0;

  constructor(
    private readonly pool: DatabasePool,
    private readonly institutionId: number,
    private readonly fileId: number,
    private readonly chunkRows: number,
    private readonly maxRows: number,
  ) {}

  async add(row: JsonValue): Promise<void> {
    this.rows += 1;
    if (this.rows > this.maxRows)
      throw tooLarge(`The file has more than ${this.maxRows} rows (IMPORT_MAX_ROWS).`);
    this.buffer.push(row);
    if (this.buffer.length >= this.chunkRows) await this.flush();
  }

  async flush(): Promise<void> {
    if (!this.buffer.length) return;
    const rows = this.buffer;
    this.buffer = [];
    // Data rows start at file row 2: the header is row 1 (and a JSON file's rows count the same).
    const firstRow = 2 + this.rows - rows.length;
    await this.pool.query(sql.unsafe`
      INSERT INTO import_chunks (institution_id, file_id, chunk, first_row, rows)
      VALUES (${this.institutionId}, ${this.fileId}, ${this.chunk}, ${firstRow},
              ${sql.json(rows)})`);
    this.chunk += 1;
  }
}

/** The rows' amounts so far plus this row's; a sum the import could not keep refuses the file. */
function addAmount(total: bigint, value: JsonValue | undefined, row: number): bigint {
  const sum = total + (amountCents(value) ?? 0n);
  if (sum > MAX_TOTAL_CENTS)
    throw fileProblem(
      `row ${row} brings the sum of the rows' amount to more than ${centsText(MAX_TOTAL_CENTS)}, the most an import adds up.`,
    );
  return sum;
}

/** Text PostgreSQL cannot store (U+0000) is refused with the row that carries it. */
const holdsNul = (values: readonly string[]) => values.some((value) => value.includes('\u0000'));

async function stageCsv(
  source: AsyncGenerator<string>,
  writer: ChunkWriter,
  resource: ImportResource,
): Promise<{ columns: string[]; amount: bigint | null }> {
  // Row widths are checked here, after the header's own checks, to name the row.
  const parser = parse({
    max_record_size: MAX_ROW_CHARACTERS,
    skip_empty_lines: true,
    relax_column_count: true,
  });
  pipeline(Readable.from(source), parser, () => {});
  let columns: string[] | null = null;
  let amountIndex = -1;
  let amount: bigint | null = null;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!columns) {
        if (record.length > MAX_COLUMNS)
          throw fileProblem(`has ${record.length} columns; an import has at most ${MAX_COLUMNS}.`);
        columns = record.map((column) => column.trim());
        const problems = headerProblems(resource, columns);
        if (problems.length) throw errors.validationFailed(problems);
        amountIndex = resource === 'gifts' ? columns.indexOf('amount') : -1;
        if (amountIndex >= 0) amount = 0n;
        continue;
      }
      if (record.length !== columns.length)
        throw fileProblem(
          `row ${writer.rows + 2} has ${record.length} cells, but the header has ${columns.length} columns.`,
        );
      if (holdsNul(record))
        throw fileProblem(`row ${writer.rows + 2} holds the NUL character (U+0000).`);
      if (amount !== null) amount = addAmount(amount, record[amountIndex], writer.rows + 2);
      await writer.add(record);
    }
  } catch (error) {
    throw csvProblem(error);
  }
  if (!columns) throw fileProblem('is empty: it needs a header row, then one row per record.');
  return { columns, amount };
}

/** `{"rows": [...]}`, split into its rows as it streams in (api/jsonRows.ts). */
async function stageJson(
  source: AsyncGenerator<string>,
  writer: ChunkWriter,
  resource: ImportResource,
): Promise<{ columns: string[]; amount: bigint | null }> {
  const splitter = new JsonRowsSplitter();
  const keys = new Set<string>();
  let amount: bigint | null = resource === 'gifts' ? 0n : null;
  for await (const piece of source) {
    for (const row of splitter.feed(piece)) {
      if (isJsonObject(row)) {
        for (const key of Object.keys(row)) keys.add(key);
        if (keys.size > MAX_COLUMNS)
          throw fileProblem(
            `row ${writer.rows + 2} brings the rows' distinct keys to ${keys.size}; an import has at most ${MAX_COLUMNS} columns.`,
          );
        if (amount !== null) amount = addAmount(amount, row.amount, writer.rows + 2);
      }
      if (JSON.stringify(row).includes('\\u0000'))
        throw fileProblem(`row ${writer.rows + 2} holds the NUL character (U+0000).`);
      await writer.add(row);
    }
  }
  splitter.end();
  return { columns: [...keys], amount };
}

const fileId = z.object({ id: z.number() });

async function stage(
  req: Request,
  deps: UploadDeps,
  institutionId: number,
  resource: ImportResource,
  format: 'csv' | 'json',
): Promise<Staged> {
  const { pool, config } = deps;
  const { id } = await pool.one(sql.type(fileId)`
    INSERT INTO import_files (institution_id, format, columns, rows_total, bytes, sha256)
    VALUES (${institutionId}, ${format}, '[]', 0, 0, '') RETURNING id`);
  try {
    const hash = createHash('sha256');
    const counted = { bytes: 0 };
    const source = textOf(req, config.IMPORT_MAX_BYTES, hash, counted);
    const writer = new ChunkWriter(
      pool,
      institutionId,
      id,
      config.IMPORT_CHUNK_ROWS,
      config.IMPORT_MAX_ROWS,
    );
    const { columns, amount } =
      format === 'csv'
        ? await stageCsv(source, writer, resource)
        : await stageJson(source, writer, resource);
    await writer.flush();
    if (writer.rows === 0) throw fileProblem('has no rows: nothing to import.');
    const sha256 = hash.digest('base64url');
    const { bytes } = counted;
    await pool.query(sql.unsafe`
      UPDATE import_files
      SET columns = ${sql.jsonb(columns)}, rows_total = ${writer.rows},
          amount_total = ${amount === null ? null : centsText(amount)}::numeric,
          bytes = ${bytes}, sha256 = ${sha256}
      WHERE institution_id = ${institutionId} AND id = ${id}`);
    return { id, columns, rows: writer.rows, amountCents: amount, bytes, sha256 };
  } catch (error) {
    await deleteUnclaimedFile(pool, institutionId, id);
    throw error;
  }
}

function formatOf(req: Request): 'csv' | 'json' {
  // No body at all is the one answer of every write (400 invalid_json), whatever the headers;
  if (!hasBody(req))
    throw errors.invalidJson(
      'This request needs the file as its body: text/csv (a header row, then one row per record) or application/json ({"rows": [{...}]}).',
    );
  if (req.is(['text/csv', 'application/csv'])) return 'csv';
  if (req.is('application/json')) return 'json';
  throw mediaProblem();
}

export function importUploadHandler(deps: UploadDeps): RequestHandler {
  return async (req, res) => {
    rejectUnknownQuery(req, [
      'resource',
      'mode',
      'on_match',
      'expected_rows',
      'expected_amount',
      'dry_run',
    ]);
    const resource = oneOf(req, 'resource', importResources);
    const choices = {
      mode: oneOf(req, 'mode', importModes, 'skip_invalid'),
      on_match: oneOf(req, 'on_match', onMatchChoices, 'error'),
      dry_run: parseDryRun(req),
      ...controlTotals(req),
    };
    const idempotencyKey = parseIdempotencyKey(req);
    const format = formatOf(req);
    const declared = Number(req.get('Content-Length') ?? 0);
    if (declared > deps.config.IMPORT_MAX_BYTES)
      throw tooLarge(
        `The file is larger than ${deps.config.IMPORT_MAX_BYTES} bytes (IMPORT_MAX_BYTES).`,
      );
    const { principal, requestId } = res.locals;
    const file = await stage(req, deps, principal.institution.id, resource, format);
    const body: ImportCreateBody = {
      file_id: file.id,
      resource,
      ...choices,
      request_id: requestId,
      api_key_id: principal.apiKeyId,
    };
    const job: WriteJob = {
      command: createImport.name,
      institution: principal.institution,
      apiKeyId: principal.apiKeyId,
      requestId,
      request: { params: {}, body },
      // The same file with the same choices is the same request, whichever upload carried it.
      fingerprint: fingerprintOf(createImport.name, {
        params: {},
        body: { sha256: file.sha256, format, resource, ...choices },
      }),
      idempotencyKey,
    };
    let result;
    try {
      result = await deps.gateway.submit(job);
    } catch (error) {
      // After a 504 the job may still run and claim the file: the workers' sweep deletes it
      // within the hour if nothing does.
      const pending = error instanceof ApiError && error.body.code === 'write_timeout';
      if (!pending) await deleteUnclaimedFile(deps.pool, principal.institution.id, file.id);
      throw error;
    }
    // Unless this upload's import now holds it, the staged file goes (a replay, a refusal).
    await deleteUnclaimedFile(deps.pool, principal.institution.id, file.id);
    if (!result.ok) throw new ApiError(result.status, result.error, result.headers);
    if (result.location) res.setHeader('Location', result.location);
    if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
    res.status(result.status).json(result.body);
  };
}
