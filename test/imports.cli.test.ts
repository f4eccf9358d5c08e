// The operator CLI's import (cli/admin.ts import) on the demo's sample CSV, against the API.
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importFile, ImportError } from '../cli/importFile.js';
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
  // Row 11 joins the household of row 4 and lists its contact points cell by cell: valid.
  expect(summary).toMatchObject({ status: 'validated', rows_total: 10, rows_failed: 3 });
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

describe('a redirect is reported, not followed: the API key goes to no other address', () => {
  /** A server that records every request it gets, with its headers. */
  async function listening(handler: (req: IncomingMessage, res: ServerResponse) => void) {
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { server, url: `http://127.0.0.1:${port}` };
  }

  let elsewhere: Awaited<ReturnType<typeof listening>>;
  const reached: IncomingHttpHeaders[] = [];
  let file: string;
  beforeAll(async () => {
    elsewhere = await listening((req, res) => {
      reached.push(req.headers);
      req.resume();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ id: 1, status: 'completed' }));
    });
    file = path.join(await mkdtemp(path.join(tmpdir(), 'import-redirect-')), 'donors.csv');
    await writeFile(file, 'role,first_name,last_name\nIndividual,Ada,Lovelace\n');
  });
  afterAll(async () => {
    await new Promise((resolve) => elsewhere?.server.close(resolve));
  });
  beforeEach(() => {
    reached.length = 0;
  });

  test.each([
    ['the upload', 'POST'],
    ['a progress poll', 'GET'],
  ])('%s redirected to another origin', async (_case, redirected) => {
    const api = await listening((req, res) => {
      req.resume();
      if (req.method === redirected) {
        res.writeHead(302, { Location: `${elsewhere.url}/api/v1/imports/1` });
        res.end();
        return;
      }
      res.writeHead(202, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ id: 1, status: 'queued' }));
    });
    try {
      const run = importFile({
        apiUrl: api.url,
        apiKey: 'dgs_key_0123456789abcdef_secret',
        file,
        resource: 'donors',
        dryRun: false,
      });
      await expect(run).rejects.toThrow(ImportError);
      await expect(run).rejects.toThrow(
        `302: the API answered with a redirect to ${elsewhere.url}`,
      );
      expect(reached).toEqual([]);
    } finally {
      await new Promise((resolve) => api.server.close(resolve));
    }
  });
});
