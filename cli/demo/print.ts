/** What the demo prints: the ready screen with its API key and three curl commands. */
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { INSTITUTION, isoDate, type Body } from './data.js';
import type { DemoInstitution } from './seed.js';

export const say = (line = '') => process.stdout.write(`${line}\n`);

/** Single quotes for the shell: 'it'\''s'. */
const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

function curl(
  method: string,
  url: string,
  key: string,
  options: { body?: Body; idempotencyKey?: string; include?: boolean } = {},
): string {
  const parts = ['curl', '-sS'];
  if (options.include) parts.push('-i');
  if (method !== 'GET') parts.push('-X', method);
  parts.push(quote(url), '-H', quote(`X-Service-API-Key: ${key}`));
  if (options.idempotencyKey) parts.push('-H', quote(`Idempotency-Key: ${options.idempotencyKey}`));
  if (options.body) {
    parts.push(
      '-H',
      quote('Content-Type: application/json'),
      '-d',
      quote(JSON.stringify(options.body)),
    );
  }
  return parts.join(' ');
}

/** How many records of each kind the institution holds. */
export async function counts(pool: DatabasePool, institutionId: number) {
  const tables = [
    'donors',
    'gifts',
    'receipts',
    'funds',
    'users',
    'award_cycles',
    'scholarships',
    'students',
    'awards',
  ] as const;
  const result: Record<string, number> = {};
  for (const table of tables) {
    result[table] = Number(
      await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM ${sql.identifier([table])}
        WHERE institution_id = ${institutionId}`),
    );
  }
  return result;
}

export interface ReadyScreen {
  apiUrl: string;
  adminToken: string;
  database: string;
  /** Whether the data was kept from an earlier run rather than made now. */
  kept: boolean;
  demo: DemoInstitution;
  totals: Record<string, number>;
}

/** The lines printed once the demo is ready; the three curl commands work as printed. */
export function readyScreen({ apiUrl, adminToken, database, kept, demo, totals }: ReadyScreen) {
  const key = demo.key;
  const base = `${apiUrl}/api/v1`;
  return [
    '',
    'Donor and Gift Management Service: demo ready',
    '',
    `  API            ${apiUrl}/api/v1`,
    `  Docs           ${apiUrl}/docs`,
    `  Queue board    ${apiUrl}/admin/queues  (any user name; password: ${adminToken})`,
    `  Database       ${database}${kept ? ' (kept from the last run; --fresh starts over)' : ''}`,
    `  Institution    ${INSTITUTION} (id ${demo.institutionId})`,
    `  API key        ${key}`,
    `  Data           ${Object.entries(totals)
      .map(([table, n]) => `${n} ${table.replace('_', ' ')}`)
      .join(', ')}`,
    '',
    'Try it (each command is one line):',
    '',
    '# 1. Dry run: checks a new donor exactly as a real create would, and writes nothing (id 0).',
    curl('POST', `${base}/donors?dry_run=true`, key, {
      body: {
        role: 'Individual',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada.lovelace@example.org',
      },
    }),
    '',
    '# 2. Idempotent create: a gift. Run it twice: the second answer replays the first',
    '#    (same id, header Idempotent-Replayed: true) and no second gift is written.',
    curl('POST', `${base}/gifts`, key, {
      include: true,
      idempotencyKey: 'demo-gift-margaret-chen-1',
      body: {
        donor_id: demo.donorId,
        amount: 500,
        subject: 'Annual Fund gift',
        gift_date: isoDate(new Date()),
        type: 'credit_card',
        fund_id: demo.fundId,
      },
    }),
    '',
    '# 3. Paged list: the 5 newest gifts. For the next page, add &starting_after=<next_cursor>.',
    curl('GET', `${base}/gifts?limit=5`, key),
    '',
    '# 4. Import a spreadsheet (a dry run): the sample has 9 donors, 3 of them with deliberate',
    '#    errors; then GET /api/v1/imports/{id}/errors, or .../errors.csv to fix and upload again.',
    `DGS_API_KEY=${key} DGS_API_URL=${apiUrl} npm run -s admin -- import --resource donors --dry-run cli/demo/sample-donors.csv`,
    '',
    'Stop with Ctrl+C (SIGTERM). The data stays for the next `npm run demo`; `npm run demo -- --fresh` starts over.',
  ];
}
