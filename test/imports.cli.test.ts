// The operator CLI's import (cli/admin.ts import) on the demo's sample CSV, against the API.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startTestService, type TestService } from './helpers/harness.js';
import { rowErrors } from './helpers/imports.js';

const adminJs = path.resolve(process.cwd(), 'dist/cli/admin.js');
const sample = path.resolve(process.cwd(), 'cli/demo/sample-donors.csv');

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

function admin(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [adminJs, ...args], {
      env: { PATH: process.env.PATH, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('imports the sample file as a dry run and prints the summary; the deliberate errors are listed', async () => {
  const env = { DGS_API_KEY: service.tenant.key, DGS_API_URL: service.api.url };
  const run = await admin(['import', '--resource', 'donors', '--dry-run', sample], env);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const { import: summary } = JSON.parse(run.stdout) as {
    import: { id: number; status: string; rows_total: number; rows_failed: number };
  };
  expect(summary).toMatchObject({ status: 'validated', rows_total: 9, rows_failed: 3 });
  const errors = await rowErrors(service, summary.id);
  expect(
    errors.map((row) => [row.row, row.errors.map((error) => `${error.param} ${error.code}`)]),
  ).toEqual([
    [6, ['last_name required']],
    [7, ['email invalid_format']],
    [9, ['email already_in_use']],
  ]);
  expect(await service.count('donors')).toBe(0);
});

test('without an API key it says what to set, and exits 1', async () => {
  const run = await admin(['import', '--resource', 'donors', sample], {});
  expect(run.code).toBe(1);
  expect(run.stderr).toContain('DGS_API_KEY');
});
