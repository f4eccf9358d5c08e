/**
 * The operators' queue dashboard as a person sees it: Debian's Chromium opens /admin/queues with
 * the operator's token, the board renders the write queue, and the page makes no request off the
 * service's own host (it must work offline and tell no third party it was opened).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { startTestService, type TestService } from './helpers/harness.js';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'operator-token-for-the-browser-0123';

let service: TestService;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: this test drives Debian's Chromium. ` +
        'Install it with `apt-get install -y chromium` (.ci/run does this on CI).',
    );
  }
  service = await startTestService({ ADMIN_TOKEN: TOKEN });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await Promise.race([
    browser?.close(),
    new Promise((resolve) => setTimeout(resolve, 15_000).unref()),
  ]);
  await service?.close();
}, 90_000);

test('the dashboard renders the write queue and requests nothing from another host', async () => {
  const context = await browser!.newContext({
    extraHTTPHeaders: { Authorization: `Bearer ${TOKEN}` },
  });
  const page = await context.newPage();
  const origin = new URL(service.url).origin;
  const outside: string[] = [];
  const pageErrors: string[] = [];
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    outside.push(url);
    return route.abort();
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));

  const response = await page.goto(`${service.url}/admin/queues`);
  expect(response?.status()).toBe(200);
  expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
  await page.getByText('Donor and gift writes').first().waitFor({ timeout: 20_000 });
  await page.getByText('writes').first().waitFor({ timeout: 20_000 });

  expect(outside).toEqual([]);
  expect(pageErrors).toEqual([]);
  await context.close();
});
