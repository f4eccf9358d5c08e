/** A private `redis-server` from the PATH: a free port, a directory of its own, nothing saved. */
import { spawnSync } from 'node:child_process';
import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, stopProcess, supervise, waitUntil } from './process.js';

export interface SpawnedRedis {
  url: string;
  port: number;
  version: string;
  stop(): Promise<void>;
}

/** The `redis-server` executable on `PATH`, or null. */
export async function findRedisServer(envPath = process.env.PATH ?? ''): Promise<string | null> {
  for (const dir of envPath.split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'redis-server');
    try {
      await fs.access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Sends PING and waits for +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('utf8');
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}

export async function startRedisServer(executable: string): Promise<SpawnedRedis> {
  const version =
    /v=(\S+)/.exec(spawnSync(executable, ['--version'], { encoding: 'utf8' }).stdout ?? '')?.[1] ??
    'unknown';
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dgs-redis-'));
  const port = await freePort();
  const proc = supervise(
    executable,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      // BullMQ's advice: never evict its keys.
      '--maxmemory-policy',
      'noeviction',
    ],
    { cwd: dir },
    { signal: 'SIGTERM', removeOnCrash: [dir] },
  );
  try {
    await waitUntil('redis-server', proc, () => ping(port), 15_000);
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
  let stopped: Promise<void> | null = null;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    version,
    stop() {
      stopped ??= (async () => {
        await stopProcess(proc, 'SIGTERM', 5_000);
        await fs.rm(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
