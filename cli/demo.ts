/**
 * `npm run demo`: a running service with realistic data, in one command.
 *
 * 1. Finds PostgreSQL and Redis: DATABASE_URL and REDIS_URL when set; otherwise an embedded
 *    PostgreSQL whose data stays in `.data/` for the next run, and a `redis-server` of its own
 *    (cli/demo/supervise.ts, common/devServices). It prints in one line which it uses.
 * 2. The database `dgs_demo` on that server (or the one DEMO_DATABASE_URL names): kept from the
 *    last run when that run filled it, else (or with `--fresh`) dropped and made anew. A database
 *    the demo did not create is never dropped (cli/demo/database.ts).
 * 3. Migrates it, and starts the API and a worker in this process (as `npm run dev` does).
 * 4. A new database gets the institution "Northbridge University", filled through the API itself
 *    (cli/demo/seed.ts); a kept one gets a new API key.
 * 5. Prints the API key and three curl commands (a dry run, an idempotent create, a paged list)
 *    that work as printed, and a fourth that saves one of last year's giving statements (issued
 *    by one run at the end of the filling) as a PDF (cli/demo/print.ts), then serves until
 *    SIGTERM or Ctrl+C.
 *
 * Settings: DATABASE_URL, DEMO_DATABASE_URL, DEMO_DATA_DIR (default .data), REDIS_URL, PORT
 * (default 3000), QUEUE_PREFIX (default dgs-demo-<database>, emptied at start), ADMIN_TOKEN
 * (default: a random one, printed), LOG_LEVEL (default warn), CURSOR_SECRET (default: random).
 */
import { migrateUp } from '../common/db/migrate.js';
import { ServiceError, type LocalServices } from '../common/devServices/index.js';
import { INSTITUTION } from './demo/data.js';
import { demoTarget, markFilled, prepareDatabase } from './demo/database.js';
import { DemoError } from './demo/errors.js';
import { counts, readyScreen, say } from './demo/print.js';
import { createDemoInstitution, reopenDemoInstitution } from './demo/seed.js';
import { checkPort, demoConfig, demoServices, emptyQueue, startStack } from './demo/supervise.js';
import { redisTargetOf } from '../common/redis.js';

const USAGE =
  'Usage: npm run demo [-- --fresh]   (--fresh: drop the kept demo data and start over)';

let services: LocalServices | undefined;

async function main(args: string[]): Promise<void> {
  const unknown = args.filter((arg) => arg !== '--fresh');
  if (unknown.length) throw new DemoError(`Unknown argument ${unknown[0]}. ${USAGE}`);
  const fresh = args.includes('--fresh');
  const env = process.env;
  await checkPort(env);

  services = await demoServices(env);
  say(`Using ${services.summary}`);
  const target = demoTarget(services.databaseUrl, env.DEMO_DATABASE_URL, Boolean(env.DATABASE_URL));
  const derivedPrefix = `dgs-demo-${target.name}`;
  const config = demoConfig(env, { database: target.url, redis: services.redisUrl }, derivedPrefix);

  // A queue prefix of the demo's own: jobs of an earlier demo run must not reach this database.
  await emptyQueue(
    redisTargetOf(config),
    config.QUEUE_PREFIX === derivedPrefix ? derivedPrefix : null,
  );

  const kept = await prepareDatabase(target, fresh);
  say(
    kept
      ? `Keeping the demo database ${target.name} from the last run …`
      : `Preparing the demo database ${target.name} …`,
  );
  await migrateUp(target.url);
  const { api, pool } = await startStack(config, services);

  let demo;
  if (kept) {
    demo = await reopenDemoInstitution(pool);
  } else {
    say(`Creating ${INSTITUTION} and its data through the API …`);
    demo = await createDemoInstitution(pool, api.url);
    await markFilled(target);
  }
  const totals = await counts(pool, demo.institutionId);
  const lines = readyScreen({
    apiUrl: api.url,
    adminToken: config.ADMIN_TOKEN ?? '',
    database: target.name,
    kept,
    demo,
    totals,
  });
  for (const line of lines) say(line);
}

main(process.argv.slice(2)).catch(async (error: unknown) => {
  const message =
    error instanceof DemoError || error instanceof ServiceError
      ? error.message
      : `Demo failed: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(`${message}\n`);
  await services?.stop().catch(() => undefined);
  process.exit(1);
});
