/**
 * `npm run openapi`: writes the OpenAPI document of the route table to openapi.json at the
 * repository root (or to the path given), formatted as the repository's Prettier settings say.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { routeTable } from '../api/routes.js';
import { buildOpenApiDocument } from '../common/openapi/document.js';

const target = process.argv[2] ?? fileURLToPath(new URL('../../openapi.json', import.meta.url));
const prettier = await import('prettier');
const options = (await prettier.resolveConfig(target)) ?? {};
const text = await prettier.format(JSON.stringify(buildOpenApiDocument(routeTable())), {
  ...options,
  parser: 'json',
});
await writeFile(target, text);
console.log(`Wrote ${target}`);
