import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { Readable } from 'node:stream';
import { SingleBar } from 'cli-progress';

/**
 * `admin import`: uploads a file to POST /api/v1/imports (streamed from disk, never read whole),
 * follows the import with a progress bar on stderr, and prints the finished import as JSON on
 * stdout. It is an API client like any other, with an API key of the institution: the import
 * goes through the same validation, queue and workers as any upload.
 */
export interface ImportOptions {
  apiUrl: string;
  apiKey: string;
  file: string;
  resource: 'donors' | 'gifts';
  dryRun: boolean;
  mode?: string;
  onMatch?: string;
  expectedRows?: string;
  expectedAmount?: string;
  idempotencyKey?: string;
}

export interface ImportSummary {
  id: number;
  status: string;
  resource: string;
  dry_run: boolean;
  rows_total: number;
  rows_processed: number;
  rows_succeeded: number;
  rows_failed: number;
  rows_skipped: number;
  failure: { code: string; message: string } | null;
}

const finished = new Set(['validated', 'completed', 'failed', 'cancelled']);
const POLL_MS = 250;

export class ImportError extends Error {}

async function call(options: ImportOptions, path: string, init: RequestInit = {}) {
  const response = await fetch(`${options.apiUrl.replace(/\/$/, '')}${path}`, {
    ...init,
    headers: { 'X-Service-API-Key': options.apiKey, ...init.headers },
    // fetch would send the API key on to wherever a redirect points, another host included: the
    // API never redirects, so a redirect is someone else's answer and is reported, not followed.
    redirect: 'manual',
  });
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel();
    throw new ImportError(
      `${response.status}: the API answered with a redirect to ${response.headers.get('Location') ?? 'nowhere'}, which is not followed, so that the API key goes nowhere else; set --api-url (DGS_API_URL) to the API's own address`,
    );
  }
  const body = (await response.json()) as ImportSummary & { error?: { message: string } };
  if (!response.ok)
    throw new ImportError(`${response.status}: ${body.error?.message ?? 'the API refused'}`);
  return body;
}

/** A bar of rows judged, then of rows written, when a person is watching stderr. */
function progressBar() {
  if (!process.stderr.isTTY) return { update() {}, stop() {} };
  const bar = new SingleBar({
    stream: process.stderr,
    format: '{phase} {bar} {percentage}% | {value}/{total} rows | failed {failed} | {duration}s',
    hideCursor: true,
  });
  let started = false;
  return {
    update(imp: ImportSummary) {
      const values = { phase: imp.status.padEnd(10), failed: imp.rows_failed };
      if (!started) bar.start(imp.rows_total, imp.rows_processed, values);
      else bar.update(imp.rows_processed, values);
      started = true;
    },
    stop: () => bar.stop(),
  };
}

export async function importFile(options: ImportOptions): Promise<ImportSummary> {
  const size = (await stat(options.file)).size;
  const query = new URLSearchParams({ resource: options.resource });
  if (options.dryRun) query.set('dry_run', 'true');
  if (options.mode) query.set('mode', options.mode);
  if (options.onMatch) query.set('on_match', options.onMatch);
  if (options.expectedRows) query.set('expected_rows', options.expectedRows);
  if (options.expectedAmount) query.set('expected_amount', options.expectedAmount);
  const json = extname(options.file).toLowerCase() === '.json';
  const created = await call(options, `/api/v1/imports?${query.toString()}`, {
    method: 'POST',
    headers: {
      'Content-Type': json ? 'application/json' : 'text/csv',
      'Content-Length': String(size),
      ...(options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {}),
    },
    body: Readable.toWeb(createReadStream(options.file)) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  const bar = progressBar();
  let current = created;
  try {
    while (!finished.has(current.status)) {
      bar.update(current);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      current = await call(options, `/api/v1/imports/${created.id}`);
    }
    bar.update(current);
  } finally {
    bar.stop();
  }
  return current;
}
