import type { ApiResponse, TestService } from './harness.js';
import { waitFor } from './wait.js';

export interface ImportBody {
  id: number;
  object: 'import';
  resource: string;
  status: string;
  mode: string;
  dry_run: boolean;
  rows_total: number;
  rows_processed: number;
  rows_succeeded: number;
  rows_failed: number;
  rows_skipped: number;
  amount_total: number | null;
  failure: { code: string; message: string } | null;
  completed_at: string | null;
}

export interface RowErrors {
  row: number;
  errors: { param: string | null; code: string; message: string }[];
}

/** POST /imports with a CSV body (or JSON rows), as a client uploads a file. */
export function upload(
  service: TestService,
  query: string,
  file: string | { rows: unknown[] },
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<ImportBody>> {
  const csv = typeof file === 'string';
  return service.call<ImportBody>('POST', `/api/v1/imports?${query}`, {
    key: options.key,
    rawBody: csv ? file : JSON.stringify(file),
    headers: { 'Content-Type': csv ? 'text/csv' : 'application/json', ...options.headers },
  });
}

const finished = ['validated', 'completed', 'failed', 'cancelled'];

/** Polls GET /imports/{id} until the import is done with what it does by itself. */
export async function settled(
  service: TestService,
  id: number,
  key?: string,
  timeoutMs = 30_000,
): Promise<ImportBody> {
  let last: ImportBody | null = null;
  await waitFor(
    async () => {
      const answer = await service.call<ImportBody>('GET', `/api/v1/imports/${id}`, { key });
      last = answer.body;
      return finished.includes(answer.body.status);
    },
    timeoutMs,
    `import ${id} to finish`,
  );
  return last!;
}

/** Every failed row of an import, walking the cursor list. */
export async function rowErrors(
  service: TestService,
  id: number,
  key?: string,
): Promise<RowErrors[]> {
  const rows: RowErrors[] = [];
  let cursor: string | null = null;
  do {
    const after: string = cursor ? `&starting_after=${cursor}` : '';
    const page = await service.call<{ data: RowErrors[]; next_cursor: string | null }>(
      'GET',
      `/api/v1/imports/${id}/errors?limit=100${after}`,
      { key },
    );
    if (page.status !== 200) throw new Error(`errors list: ${page.status}`);
    rows.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor);
  return rows;
}

/** A GET whose answer is CSV (errors.csv, templates): status and text. */
export async function getText(
  service: TestService,
  path: string,
): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(`${service.api.url}${path}`, {
    headers: { 'X-Service-API-Key': service.tenant.key },
  });
  return {
    status: response.status,
    type: response.headers.get('Content-Type'),
    text: await response.text(),
  };
}
