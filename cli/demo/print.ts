/**
 * What the demo prints: the ready screen with its API key, three curl commands, and the same
 * calls through the client library (sdk/).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
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
  options: {
    body?: Body;
    idempotencyKey?: string;
    include?: boolean;
    accept?: string;
    output?: string;
  } = {},
): string {
  const parts = ['curl', '-sS'];
  if (options.include) parts.push('-i');
  if (options.output) parts.push('-o', quote(options.output));
  if (method !== 'GET') parts.push('-X', method);
  parts.push(quote(url), '-H', quote(`X-Service-API-Key: ${key}`));
  if (options.idempotencyKey) parts.push('-H', quote(`Idempotency-Key: ${options.idempotencyKey}`));
  if (options.accept) parts.push('-H', quote(`Accept: ${options.accept}`));
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

/** sdk/dist/index.js of this checkout, which `npm run build` (and so `npm run demo`) builds. */
const sdkEntry = pathToFileURL(
  fileURLToPath(new URL('../../../sdk/dist/index.js', import.meta.url)),
).href;

/**
 * Commands 2 and 3 through the client library, as one `node -e` line: the gift's create with the
 * same key and body replays it, and the first page of the list. JSON is JavaScript, and has no
 * single quote to end the shell's quoting.
 */
function clientLine(apiUrl: string, key: string, gift: Body, idempotencyKey: string): string {
  const script = [
    `import { DonorGift } from ${JSON.stringify(sdkEntry)};`,
    `const client = new DonorGift(${JSON.stringify({ apiKey: key, baseUrl: apiUrl })});`,
    `const gift = await client.gifts.create(${JSON.stringify(gift)}, ${JSON.stringify({ idempotencyKey })});`,
    'const page = await client.gifts.list({ limit: 5 });',
    'console.log(JSON.stringify({ gift: gift.id, replayed: gift.lastResponse.idempotentReplayed, newest: page.data.map((g) => g.id), next_cursor: page.next_cursor }));',
  ].join(' ');
  return `node --input-type=module -e ${quote(script)}`;
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

/** The lines printed once the demo is ready; the commands work as printed. */
export function readyScreen({ apiUrl, adminToken, database, kept, demo, totals }: ReadyScreen) {
  const key = demo.key;
  const base = `${apiUrl}/api/v1`;
  const giftKey = 'demo-gift-margaret-chen-1';
  const gift = {
    donor_id: demo.donorId,
    amount: 500,
    subject: 'Annual Fund gift',
    gift_date: isoDate(new Date()),
    type: 'credit_card',
    fund_id: demo.fundId,
  };
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
      idempotencyKey: giftKey,
      body: gift,
    }),
    '',
    '# 3. Paged list: the 5 newest gifts. For the next page, add &starting_after=<next_cursor>.',
    curl('GET', `${base}/gifts?limit=5`, key),
    '',
    '# 2 and 3 from Node with the client library (sdk/; in a project of your own, npm install',
    '#    <this checkout>/sdk and import from @donor-gift/client). Its create sends one',
    '#    Idempotency-Key on every retry, so here it replays the gift of command 2:',
    clientLine(apiUrl, key, gift, giftKey),
    '',
    '# 4. Import a spreadsheet (a dry run): the sample has 10 donors, 3 of them with deliberate',
    '#    errors, and one joining the household of an earlier row by household_external_id, with',
    '#    a work email and a winter address as cells (emails.0.address, addresses.0.seasonal_from);',
    '#    then GET /api/v1/imports/{id}/errors, or .../errors.csv to fix and upload again.',
    `DGS_API_KEY=${key} DGS_API_URL=${apiUrl} npm run -s admin -- import --resource donors --dry-run cli/demo/sample-donors.csv`,
    '',
    ...(demo.statementId === null
      ? []
      : [
          "# 5. Last year's giving statements were issued by one run (GET /api/v1/giving-statement-runs):",
          '#    one of them as a printable PDF, in statement.pdf.',
          curl('GET', `${base}/giving-statements/${demo.statementId}`, key, {
            accept: 'application/pdf',
            output: 'statement.pdf',
          }),
          '',
        ]),
    'Stop with Ctrl+C (SIGTERM). The data stays for the next `npm run demo`; `npm run demo -- --fresh` starts over.',
  ];
}
