/** The demo's database: which one, and whether it is kept from the last run or made anew. */
import pg from 'pg';
import { DemoError } from './errors.js';

const DEFAULT_DEMO_DATABASE = 'dgs_demo';
/** Marks a database as the demo's own: only such a database is ever dropped. */
const COMMENT_PREFIX = 'donor-gift-service demo database (npm run demo)';
/** Being filled: a run stopped now leaves a database the next run makes anew. */
const FILLING = `${COMMENT_PREFIX}; being filled`;
/** Filled: the next run keeps it (unless --fresh). */
const READY = `${COMMENT_PREFIX}; kept by the next run unless --fresh`;

export interface Target {
  /** Where CREATE/DROP DATABASE run: DATABASE_URL, or the embedded server. */
  serverUrl: string;
  url: string;
  name: string;
}

/**
 * `dgs_demo` on the server, or the database DEMO_DATABASE_URL names: on a server given by
 * DATABASE_URL that URL is used as it is; on the embedded server only its database name counts.
 */
export function demoTarget(
  serverUrl: string,
  demoDatabaseUrl: string | undefined,
  external: boolean,
): Target {
  let url: URL;
  try {
    url = new URL(demoDatabaseUrl && external ? demoDatabaseUrl : serverUrl);
    if (!demoDatabaseUrl) url.pathname = `/${DEFAULT_DEMO_DATABASE}`;
    else if (!external) url.pathname = new URL(demoDatabaseUrl).pathname;
  } catch {
    throw new DemoError(
      `Invalid configuration: ${demoDatabaseUrl ? 'DEMO_DATABASE_URL' : 'DATABASE_URL'} is not a URL`,
    );
  }
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    throw new DemoError(
      `Invalid configuration: DEMO_DATABASE_URL must name a database of lower-case letters, digits and "_" (got "${name}")`,
    );
  }
  if (name === decodeURIComponent(new URL(serverUrl).pathname.slice(1))) {
    throw new DemoError(
      'Invalid configuration: DEMO_DATABASE_URL must name another database than DATABASE_URL',
    );
  }
  return { serverUrl, url: url.toString(), name };
}

/**
 * Keeps the demo database of the last run when it was filled completely (`fresh` false), else
 * drops it (only if the demo made it) and creates it anew. Returns whether it was kept.
 */
export async function prepareDatabase(target: Target, fresh: boolean): Promise<boolean> {
  const admin = new pg.Client({ connectionString: target.serverUrl });
  await admin.connect();
  try {
    const existing = await admin.query<{ comment: string | null }>(
      `SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`,
      [target.name],
    );
    const row = existing.rows[0];
    if (row) {
      if (!row.comment?.startsWith(COMMENT_PREFIX)) {
        throw new DemoError(
          `Database ${target.name} exists and was not made by the demo: not dropping it. ` +
            'Name another one with DEMO_DATABASE_URL.',
        );
      }
      if (row.comment === READY && !fresh) return true;
      await admin.query(`DROP DATABASE ${target.name} WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE ${target.name}`);
    await admin.query(`COMMENT ON DATABASE ${target.name} IS '${FILLING}'`);
    return false;
  } finally {
    await admin.end();
  }
}

/** Marks the demo database as filled: the next run keeps it. */
export async function markFilled(target: Target): Promise<void> {
  const admin = new pg.Client({ connectionString: target.serverUrl });
  await admin.connect();
  try {
    await admin.query(`COMMENT ON DATABASE ${target.name} IS '${READY}'`);
  } finally {
    await admin.end();
  }
}
