// The README's first command on the machine's own Node (20 here): `npm install` runs quietly,
// since every script of the project runs on the Node 24 it installs.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The environment of a shell outside npm: no node_modules/.bin on PATH, no npm_* variables. */
function plainEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.toLowerCase().startsWith('npm_')) env[name] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => !dir.includes(`${path.sep}node_modules${path.sep}`))
    .join(path.delimiter);
  return env;
}

test('npm install with the machine’s own npm and Node prints no warning', () => {
  const env = plainEnvironment();
  const node = spawnSync('node', ['--version'], { env, encoding: 'utf8' });
  expect(node.status).toBe(0);
  const install = spawnSync('npm', ['install', '--dry-run', '--no-audit', '--no-fund'], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect({ status: install.status, node: node.stdout.trim() }).toEqual({
    status: 0,
    node: node.stdout.trim(),
  });
  expect(`${install.stdout}${install.stderr}`).not.toMatch(/npm warn|EBADENGINE/i);
});
