/**
 * The docs page as a person sees it: Chromium from the npm package @sparticuz/chromium (driven by
 * playwright-core; test/helpers/browser.ts) opens /docs on a test service, the reference renders
 * from /api/v1/openapi.json, and every operation of that document is listed. A screenshot is left
 * in test-artifacts/docs.png.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext } from 'playwright-core';
import { closeBrowser, launchChromium } from './helpers/browser.js';
import { startTestService, type TestService } from './helpers/harness.js';

const artifacts = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'test-artifacts',
);
const screenshot = path.join(artifacts, 'docs.png');

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface OpenApiDocument {
  info: { title: string };
  paths: Record<string, Partial<Record<string, { summary?: string }>>>;
}

interface Operation {
  method: string;
  path: string;
  summary: string | undefined;
}

let service: TestService;
let browser: Browser | undefined;
let context: BrowserContext | undefined;

beforeAll(async () => {
  service = await startTestService();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
});

afterAll(async () => {
  await closeBrowser(browser);
  await service?.close();
}, 90_000);

async function openApiDocument(): Promise<{ document: OpenApiDocument; operations: Operation[] }> {
  const response = await fetch(`${service.url}/api/v1/openapi.json`);
  expect(response.status).toBe(200);
  const document = (await response.json()) as OpenApiDocument;
  const operations = Object.entries(document.paths).flatMap(([pathName, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({
      method: method.toUpperCase(),
      path: pathName,
      summary: item[method]?.summary?.trim() || undefined,
    })),
  );
  return { document, operations };
}

test('GET /docs is an HTML page, needing no API key, whose scripts all come from this server', async () => {
  const response = await fetch(`${service.url}/docs`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  const csp = response.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("connect-src 'self'");

  const html = await response.text();
  const scripts = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((match) => match[1]);
  expect(scripts.length).toBeGreaterThanOrEqual(2);
  for (const src of scripts) {
    expect(src).toMatch(/^\/docs\/assets\//);
    const script = await fetch(`${service.url}${src}`);
    expect({ src, status: script.status }).toEqual({ src, status: 200 });
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
  }
  const bundle = scripts.find((src) => src?.includes('scalar-api-reference'));
  expect(bundle).toBeDefined();
  const gzipped = await fetch(`${service.url}${bundle}`, {
    headers: { 'Accept-Encoding': 'gzip' },
  });
  expect(gzipped.headers.get('content-encoding')).toBe('gzip');
  expect(gzipped.headers.get('cache-control')).toContain('immutable');
  expect((await gzipped.text()).length).toBeGreaterThan(1_000_000);
});

test('the rendered reference lists every operation of the OpenAPI document and loads nothing from elsewhere', async () => {
  const { document: openapi, operations } = await openApiDocument();
  expect(operations.length).toBeGreaterThan(0);

  const origin = new URL(service.url).origin;
  const outside: string[] = [];
  const failed: string[] = [];
  const pageErrors: string[] = [];
  const page = await context!.newPage();
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    outside.push(url);
    return route.abort();
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
  });

  await page.goto(`${service.url}/docs`);
  await page.getByText(openapi.info.title).first().waitFor({ timeout: 20_000 });
  const first = operations[0]!;
  await page
    .getByText(first.summary ?? first.path)
    .first()
    .waitFor({ timeout: 20_000 });

  const text = await page.locator('body').innerText();
  const missing = operations
    .filter((operation) => !text.includes(operation.summary ?? operation.path))
    .map((operation) => `${operation.method} ${operation.path} (${operation.summary})`);
  expect(missing).toEqual([]);

  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: screenshot });
  expect(existsSync(screenshot)).toBe(true);

  expect(outside).toEqual([]);
  expect(failed).toEqual([]);
  expect(pageErrors).toEqual([]);
  await page.close();
});
