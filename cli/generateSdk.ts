/**
 * `npm run sdk:generate`: writes the generated files of the client library (sdk/src/schema.ts,
 * sdk/src/resources.ts) from openapi.json at the repository root. `--check` writes nothing and
 * fails, naming the files, when they differ from what the document makes.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSdk } from './sdk/generate.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const check = process.argv.includes('--check');
const document = JSON.parse(await readFile(path.join(root, 'openapi.json'), 'utf8')) as Record<
  string,
  unknown
>;
const stale: string[] = [];
for (const [file, text] of Object.entries(await generateSdk(document))) {
  const target = path.join(root, file);
  const current = await readFile(target, 'utf8').catch(() => null);
  if (current === text) continue;
  if (check) stale.push(file);
  else {
    await writeFile(target, text);
    console.log(`Wrote ${file}`);
  }
}
if (stale.length) {
  console.error(`Out of date with openapi.json: ${stale.join(', ')}. Run npm run sdk:generate.`);
  process.exit(1);
}
