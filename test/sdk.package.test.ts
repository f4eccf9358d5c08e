/**
 * The client library as another project gets it: sdk/ built by `npm run build` (the `pretest`
 * step) and installed with `npm install <checkout>/sdk`; its types refuse an error code outside
 * the catalogue; and its generated files are what openapi.json makes today (the CI check of
 * `npm run sdk:generate`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { generateSdk } from '../cli/sdk/generate.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('the generated files of sdk/ are what openapi.json makes (run `npm run sdk:generate` after a change)', async () => {
  const document = JSON.parse(await readFile(path.join(root, 'openapi.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  for (const [file, text] of Object.entries(await generateSdk(document)))
    expect({ file, text: await readFile(path.join(root, file), 'utf8') }).toEqual({ file, text });
});

const consumerTypes = `
import { DonorGift, DonorGiftError, RateLimitError, type ErrorCode } from '@donor-gift/client';

export const known: ErrorCode = 'idempotency_key_in_flight';
// @ts-expect-error not a code of the service's error catalogue
export const unknown: ErrorCode = 'no_such_code';

const client = new DonorGift({ apiKey: 'dgs_key_x', baseUrl: 'http://127.0.0.1:3000' });

export async function record(): Promise<number> {
  try {
    const gift = await client.gifts.create(
      { donor_id: 1, amount: 10, subject: 'Gift', gift_date: '2026-01-01' },
      { idempotencyKey: 'gift-1' },
    );
    const replayed: boolean = gift.lastResponse.idempotentReplayed;
    return replayed ? 0 : gift.id;
  } catch (error) {
    if (error instanceof RateLimitError) return error.retryAfter ?? 0;
    // @ts-expect-error a code outside the catalogue is no code the service sends
    if (error instanceof DonorGiftError && error.code === 'no_such_code') return -1;
    throw error;
  }
}

export async function donorsGifts(donorId: number): Promise<string[]> {
  const subjects: string[] = [];
  for await (const gift of client.gifts.list({ donor_id: donorId })) subjects.push(gift.subject);
  return subjects;
}

// @ts-expect-error a create must send its required fields
void client.gifts.create({ donor_id: 1 });
`;

const consumerRun = `
import { DonorGift, DonorGiftError, InvalidRequestError } from '@donor-gift/client';
let thrown = '';
try {
  new DonorGift({ baseUrl: 'http://127.0.0.1:1' });
} catch (error) {
  thrown = error.message;
}
const client = new DonorGift({ apiKey: 'dgs_key_x', baseUrl: 'http://127.0.0.1:1', maxRetries: 0 });
const failed = await client.gifts.retrieve(1).catch((error) => error);
console.log(JSON.stringify({
  thrown,
  connection: failed instanceof DonorGiftError && !(failed instanceof InvalidRequestError),
  name: failed.name,
  resources: typeof client.gifts.refunds.create,
}));
`;

test('npm install <checkout>/sdk in another project gives a working, typed client', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'dgs-sdk-consumer-'));
  try {
    await writeFile(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }),
    );
    const install = spawnSync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--offline', path.join(root, 'sdk')],
      { cwd: dir, encoding: 'utf8', timeout: 120_000 },
    );
    expect({ status: install.status, stderr: install.stderr }).toEqual({ status: 0, stderr: '' });

    await writeFile(path.join(dir, 'run.mjs'), consumerRun);
    const run = spawnSync(process.execPath, ['run.mjs'], { cwd: dir, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({
      thrown: expect.stringMatching(/apiKey is required/),
      connection: true,
      name: 'APIConnectionError',
      resources: 'function',
    });

    await writeFile(path.join(dir, 'consumer.ts'), consumerTypes);
    const program = ts.createProgram([path.join(dir, 'consumer.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      // The package's own declarations are checked too: they must stand on their own.
      skipLibCheck: false,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      );
    expect(problems).toEqual([]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
