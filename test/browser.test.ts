/**
 * The browser tests' Chromium comes from npm (@sparticuz/chromium, test/helpers/browser.ts), so
 * that `npm install` and `npm test` are all they need: not a system Chromium, even where one is
 * installed, and nothing downloaded at run time.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import {
  closeBrowser,
  launchChromium,
  packagedChromiumVersion,
  unpackChromium,
} from './helpers/browser.js';

let browser: Browser | undefined;

afterAll(async () => {
  await closeBrowser(browser);
}, 30_000);

test('the browser that launches is the Chromium the npm package ships, unpacked under the temporary directory', async () => {
  const unpacked = await unpackChromium();
  expect(path.relative(tmpdir(), unpacked.executable)).toBe(
    path.join(`dgs-chromium-${unpacked.version}`, 'chromium'),
  );

  browser = await launchChromium();
  const major = packagedChromiumVersion().split('.')[0];
  expect(browser.version().split('.')[0]).toBe(major);

  const page = await browser.newPage();
  await page.setContent('<main><h1>Rendered</h1><p>with the packaged font</p></main>');
  expect(await page.locator('main').innerText()).toBe('Rendered\n\nwith the packaged font');
  await page.close();
});
