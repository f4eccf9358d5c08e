import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { within } from '../deadline.js';

/** A local service could not be started; the message says what to do instead. */
export class ServiceError extends Error {}

/** A port nobody listens on right now (the kernel picks it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface Supervised {
  child: ChildProcess;
  /** Tells the reaper that the server was stopped as it should be. */
  release(): void;
  /** The last lines it printed (stdout and stderr), for an error message. */
  output: string[];
  exited: Promise<number | null>;
}

/**
 * Starts a process (`server`: one that runs until stopped) in a process group of its own, so that Ctrl+C in the terminal reaches
 * only the demo or the test run, which then stops the server after its own clients.
 */
export function supervise(
  command: string,
  args: string[],
  options: SpawnOptions,
  server: { signal: NodeJS.Signals; removeOnCrash: string[] } | null,
): Supervised {
  const child = spawn(command, args, {
    ...options,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (output.length > 40) output.splice(0, output.length - 40);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', (error) => {
      output.push(error.message);
      resolve(-1);
    });
    child.once('exit', (code) => resolve(code));
  });
  let release = () => {};
  if (server) {
    // A server must not keep this process alive on its own: stop() ends it.
    child.unref();
    unref(child.stdout);
    unref(child.stderr);
    if (child.pid) release = reaper(child.pid, server.signal, server.removeOnCrash);
  }
  return { child, output, exited, release };
}

const unref = (stream: unknown) => (stream as { unref?: () => void } | null)?.unref?.();

/**
 * A watchdog process (reaper.js) that stops the server and removes `dirs` if this process dies
 * without stopping it; the function returned tells it that all went well.
 */
function reaper(pid: number, signal: NodeJS.Signals, dirs: string[]): () => void {
  // Next to this module in dist/; from the TypeScript sources (tests), the compiled one.
  const here = path.dirname(fileURLToPath(import.meta.url));
  const script =
    [path.join(here, 'reaper.js'), path.join(here, '../../dist/common/devServices/reaper.js')].find(
      existsSync,
    ) ?? path.join(here, 'reaper.js');
  const child = spawn(process.execPath, [script, String(pid), signal, ...dirs], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.on('error', () => undefined);
  child.stdin?.on('error', () => undefined);
  child.unref();
  unref(child.stdin);
  return () => child.stdin?.end('done\n');
}

/** Sends `signal`, then SIGKILL if it has not exited within `graceMs`. */
export async function stopProcess(
  proc: Supervised,
  signal: NodeJS.Signals,
  graceMs = 10_000,
): Promise<void> {
  proc.release();
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill(signal);
  const killed = await within(
    proc.exited.then(() => false),
    graceMs,
    () => true,
  );
  if (killed) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
}

/** Polls `check` until it resolves true; fails when the process exits or time runs out. */
export async function waitUntil(
  what: string,
  proc: Supervised,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (proc.child.exitCode !== null || proc.child.signalCode !== null || Date.now() > deadline) {
      const why =
        proc.child.exitCode !== null || proc.child.signalCode !== null
          ? 'exited'
          : `did not answer within ${timeoutMs / 1000} s`;
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
      throw new ServiceError(`${what} ${why}:\n${proc.output.slice(-15).join('\n')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
