import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../common/config.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServiceProcess {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

export const configEnv = (
  config: Config,
  overrides: Record<string, string> = {},
): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  PORT: '0',
  DATABASE_URL: config.DATABASE_URL,
  REDIS_URL: config.REDIS_URL,
  CURSOR_SECRET: config.CURSOR_SECRET,
  QUEUE_PREFIX: config.QUEUE_PREFIX,
  WRITE_TIMEOUT_MS: String(config.WRITE_TIMEOUT_MS),
  LOG_LEVEL: 'info',
  ...overrides,
});

/** Runs a compiled entry point (`dist/api/main.js`, `dist/worker/main.js`) as its own process. */
export function spawnEntry(entry: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [path.join(root, 'dist', entry)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout
    ?.setEncoding('utf8')
    .on('data', (chunk: string) => stdout.push(...chunk.split('\n').filter(Boolean)));
  child.stderr
    ?.setEncoding('utf8')
    .on('data', (chunk: string) => stderr.push(...chunk.split('\n').filter(Boolean)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout, stderr, exited };
}

/** Waits for a JSON log line with the given message and returns it. */
export async function waitForLog(
  proc: ServiceProcess,
  message: string,
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const line of proc.stdout) {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed.msg === message) return parsed;
      } catch {
        // not a log line
      }
    }
    if (Date.now() > deadline || proc.child.exitCode !== null) {
      throw new Error(
        `no "${message}" log line; stdout: ${proc.stdout.join('\n')} stderr: ${proc.stderr.join('\n')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
