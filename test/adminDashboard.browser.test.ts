/**
 * The operators' queue dashboard as a person sees it: the packaged Chromium
 * (test/helpers/browser.ts) opens /admin/queues with the operator's token, the board renders the
 * write queue, and the page makes no request off the service's own host (it must work offline and
 * tell no third party it was opened).
 */
import type { Browser } from 'playwright-core';
import { closeBrowser, launchChromium } from './helpers/browser.js';
import { startTestService, type TestService } from './helpers/harness.js';

const TOKEN = 'operator-token-for-the-browser-0123';

let service: TestService;
let browser: Browser | undefined;

beforeAll(async () => {
  service = await startTestService({ ADMIN_TOKEN: TOKEN });
  browser = await launchChromium();
});

afterAll(async () => {
  await closeBrowser(browser);
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
