import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Starts a compiled entry point (e.g. `api/main.js`, or an absolute path) with its stdout
 * discarded; `nodeOptions` go to Node before the entry (e.g. `--cpu-prof`).
 */
export function spawnProcess(
  entry: string,
  env: Record<string, string>,
  nodeOptions: string[] = [],
): ChildProcess {
  return spawn(process.execPath, [...nodeOptions, path.resolve(distRoot, entry)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The Node options of an npm script of package.json (`node <options> dist/<entry>`). */
export async function nodeOptionsOf(script: string, entry: string): Promise<string> {
  const manifest = JSON.parse(
    await readFile(path.resolve(distRoot, '..', 'package.json'), 'utf8'),
  ) as { scripts: Record<string, string> };
  const command = manifest.scripts[script] ?? '';
  return command.startsWith('node ') && command.endsWith(` dist/${entry}`)
    ? command.slice('node '.length, -` dist/${entry}`.length).trim()
    : '';
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls until `check` passes (a server answering, a worker committing a first write). */
export async function until(label: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${label} did not become ready`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** SIGTERM, then wait for the exit (at once if it already exited). */
export const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
