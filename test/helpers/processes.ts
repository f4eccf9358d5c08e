import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
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
  ...(config.DATABASE_MIGRATION_URL
    ? { DATABASE_MIGRATION_URL: config.DATABASE_MIGRATION_URL }
    : {}),
  ...(config.DATABASE_READ_URL ? { DATABASE_READ_URL: config.DATABASE_READ_URL } : {}),
  ...(config.REDIS_URL ? { REDIS_URL: config.REDIS_URL } : {}),
  // A REDIS_URL given here (a Redis of the test's own) is meant to be used, not the cluster.
  ...(config.REDIS_CLUSTER_NODES.length && !overrides.REDIS_URL
    ? {
        REDIS_CLUSTER_NODES: config.REDIS_CLUSTER_NODES.map(
          ({ host, port }) => `${host}:${port}`,
        ).join(','),
        ...(config.REDIS_CLUSTER_USERNAME
          ? { REDIS_CLUSTER_USERNAME: config.REDIS_CLUSTER_USERNAME }
          : {}),
        ...(config.REDIS_CLUSTER_PASSWORD
          ? { REDIS_CLUSTER_PASSWORD: config.REDIS_CLUSTER_PASSWORD }
          : {}),
        REDIS_CLUSTER_TLS: String(config.REDIS_CLUSTER_TLS),
      }
    : {}),
  WRITE_QUEUE_SHARDS: String(config.WRITE_QUEUE_SHARDS),
  DATABASE_PREPARED_STATEMENTS: String(config.DATABASE_PREPARED_STATEMENTS),
  CURSOR_SECRET: config.CURSOR_SECRET,
  QUEUE_PREFIX: config.QUEUE_PREFIX,
  WRITE_TIMEOUT_MS: String(config.WRITE_TIMEOUT_MS),
  RATE_LIMIT_PER_SECOND: String(config.RATE_LIMIT_PER_SECOND),
  LOG_LEVEL: 'info',
  ...overrides,
});

/**
 * Runs a compiled entry point (`dist/api/main.js`, `dist/worker/main.js`, `dist/cli/demo.js`) as
 * its own process, with this environment only.
 */
export function spawnEntry(
  entry: string,
  env: Record<string, string>,
  args: string[] = [],
): ServiceProcess {
  const child = spawn(process.execPath, [path.join(root, 'dist', entry), ...args], {
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

/** Spawns an entry point and waits for its ready line (`api listening`, `worker ready`). */
export async function startEntry(
  entry: string,
  env: Record<string, string>,
  readyMessage = entry.startsWith('api') ? 'api listening' : 'worker ready',
  timeoutMs = 20_000,
): Promise<ServiceProcess> {
  const proc = spawnEntry(entry, env);
  try {
    await waitForLog(proc, readyMessage, timeoutMs);
  } catch (error) {
    proc.child.kill('SIGKILL');
    throw error;
  }
  return proc;
}

/** Sends a signal (SIGKILL by default) and resolves once the process is gone. */
export async function killProcess(proc: ServiceProcess, signal: NodeJS.Signals = 'SIGKILL') {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill(signal);
  await proc.exited;
}

/** A port that was free a moment ago, for a process that must come back on the same one. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once something accepts TCP connections on the port. */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * A private redis-server on its own port, so that a test can kill, restart or freeze it without
 * touching the shared one. Persistence is AOF in a temporary directory, as in production.
 */
export class RedisServer {
  private child: ChildProcess | null = null;
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(): Promise<RedisServer> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dgs-redis-'));
    const server = new RedisServer(await freePort(), dir);
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** (Re)starts redis-server on the same port and data directory. */
  async restart(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    await waitForPort(this.port);
  }

  /** SIGKILL, as a crash would; resolves once the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }

  /** Freezes the server (SIGSTOP): connections stay open but nothing answers. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    this.resume();
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }
}
