// The OpenAPI document passes Spectral's OpenAPI rules and the OWASP API Security ruleset, with
// the few rules that do not fit this API turned off in .spectral.yaml, each with its reason.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { routeTable } from '../api/routes.js';
import { buildOpenApiDocument } from '../common/openapi/document.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('Spectral (spectral:oas and the OWASP ruleset) finds nothing, down to hints', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'dgs-lint-'));
  try {
    const document = path.join(dir, 'openapi.json');
    await writeFile(document, JSON.stringify(buildOpenApiDocument(routeTable()), null, 2));
    const lint = spawnSync(
      process.execPath,
      [
        path.join(root, 'node_modules/@stoplight/spectral-cli/dist/index.js'),
        'lint',
        document,
        '--ruleset',
        path.join(root, '.spectral.yaml'),
        '--format',
        'json',
        '--fail-severity',
        'hint',
        '--quiet',
      ],
      { cwd: root, encoding: 'utf8', timeout: 120_000 },
    );
    const findings = (
      JSON.parse(lint.stdout || '[]') as Array<{ code: string; path: string[] }>
    ).map((finding) => `${finding.code} at ${finding.path.join('.')}`);
    expect(findings).toEqual([]);
    expect(lint.status).toBe(0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
