import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { within } from '../../common/deadline.js';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's Chromium, headless, with a fresh throwaway profile, and without the background
 * traffic (updates, sync) that this machine's closed network refuses.
 */
export async function launchChromium(purpose: string): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: ${purpose} drives Debian's Chromium. ` +
        'Install it with `apt-get install -y chromium` (.ci/run does this on CI).',
    );
  }
  return chromium.launch({
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
}

/** Closes the browser, waiting at most 15 s: on a loaded machine Chromium can be slow to quit. */
export async function closeBrowser(browser: Browser | undefined): Promise<void> {
  if (browser) await within(browser.close(), 15_000, () => undefined);
}
