import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createBrotliDecompress } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import { within } from '../../common/deadline.js';

/**
 * The tests' browser is the headless Chromium inside the npm package @sparticuz/chromium, so
 * that `npm install` is all a machine needs for the browser tests: no system package, and
 * nothing downloaded at run time. The package ships Brotli-compressed files: the browser, the
 * libraries it links to that a bare Linux may lack (NSS, NSPR, expat) and a font.
 */
const run = promisify(execFile);
const packedDirectory = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')),
  '..',
  'bin',
);

export interface UnpackedChromium {
  version: string;
  executable: string;
  libraries: string;
  fontConfig: string;
}

/** The package's version, which is the version of the Chromium it ships (its major). */
export function packagedChromiumVersion(): string {
  const manifest = path.join(packedDirectory, '..', 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

async function unbrotli(file: string, target: string): Promise<void> {
  await pipeline(
    createReadStream(path.join(packedDirectory, file)),
    createBrotliDecompress(),
    createWriteStream(target),
  );
}

/** Unpacks a .tar.br of the package into `directory` with the system's tar. */
async function untarBrotli(file: string, directory: string): Promise<void> {
  // Through a file, not a pipe: a stream piped into tar's standard input failed now and then
  // with "Premature close" when tar exited as the stream ended.
  const archive = path.join(directory, file.replace(/\.br$/, ''));
  await unbrotli(file, archive);
  await run('tar', ['-x', '-f', archive, '-C', directory]);
  await rm(archive);
}

/**
 * Unpacks the browser once per package version into the temporary directory (about 210 MB, a
 * few seconds), and reuses it after. Browser test files run in parallel workers: each unpacks
 * into a directory of its own and renames it into place, so a half-unpacked browser is never
 * seen, and a run killed while unpacking leaves only a partial directory that is never used.
 */
export async function unpackChromium(): Promise<UnpackedChromium> {
  const version = packagedChromiumVersion();
  const directory = path.join(tmpdir(), `dgs-chromium-${version}`);
  const unpacked: UnpackedChromium = {
    version,
    executable: path.join(directory, 'chromium'),
    libraries: path.join(directory, 'lib'),
    fontConfig: path.join(directory, 'fonts.conf'),
  };
  if (existsSync(directory)) return unpacked;

  const staging = await mkdtemp(`${directory}.partial-`);
  try {
    await unbrotli('chromium.br', path.join(staging, 'chromium'));
    await chmod(path.join(staging, 'chromium'), 0o755);
    await untarBrotli('al2023.tar.br', staging);
    await untarBrotli('fonts.tar.br', staging);
    // The package's own fonts.conf names Lambda's directories: this one names the unpacked font,
    // then the system's fonts where there are any.
    await writeFile(
      path.join(staging, 'fonts.conf'),
      [
        '<?xml version="1.0"?>',
        '<!DOCTYPE fontconfig SYSTEM "fonts.dtd">',
        '<fontconfig>',
        `  <dir>${path.join(directory, 'fonts')}</dir>`,
        `  <cachedir>${path.join(directory, 'fonts-cache')}</cachedir>`,
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>',
        '</fontconfig>',
        '',
      ].join('\n'),
    );
    await rename(staging, directory);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // Another worker renamed its copy into place first.
    if (!existsSync(directory)) throw error;
  }
  return unpacked;
}

/**
 * The packaged Chromium, headless, with a fresh throwaway profile, and without the background
 * traffic (updates, sync) that this machine's closed network refuses.
 */
export async function launchChromium(): Promise<Browser> {
  const unpacked = await unpackChromium();
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined) env[name] = value;
  }
  return chromium.launch({
    executablePath: unpacked.executable,
    headless: true,
    env: {
      ...env,
      // The package's libraries first: the same browser on every machine, whatever it has.
      LD_LIBRARY_PATH: [unpacked.libraries, env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
      FONTCONFIG_FILE: unpacked.fontConfig,
    },
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
