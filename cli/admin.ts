/**
 * The operator's command-line tool: institutions and API keys, which tenants cannot manage,
 * volume seeding, the webhooks of every institution (failing endpoints, replays), imports and
 * donor merges through the API. Output is one JSON object on stdout; progress, logs and errors go to stderr.
 */
import { SingleBar } from 'cli-progress';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { DatabasePool } from 'slonik';
import { parsePermissions, type Permissions } from '../common/auth/permissions.js';
import { createDatabasePool } from '../common/db/pool.js';
import {
  createInstitution,
  findInstitution,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from '../common/institutions.js';
import {
  DEFAULT_SEED_FUNDS,
  MAX_SEED_COUNT,
  seedInstitution,
  type SeedCounts,
} from '../common/seed/seedInstitution.js';
import { currencyCode } from '../common/validation/fields.js';
import { failingEndpoints, replayEvent } from '../common/webhooks/operator.js';
import { importFile, ImportError } from './importFile.js';
import { mergeDonors } from './mergeDonors.js';

class CliError extends Error {}

const permissionsOption = (value: string): Permissions => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('must be a JSON object, e.g. \'{"*":"read"}\'');
  }
  const result = parsePermissions(parsed);
  if (!result.ok) throw new InvalidArgumentError(result.problem);
  return result.permissions;
};

const positiveInt = (value: string) => {
  const number = Number(value);
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(number)) {
    throw new InvalidArgumentError('must be a positive integer');
  }
  return number;
};
const seedCount = (value: string) => {
  const number = positiveInt(value);
  if (number > MAX_SEED_COUNT) throw new InvalidArgumentError(`must be at most ${MAX_SEED_COUNT}`);
  return number;
};
const currency = (value: string) => {
  const upper = value.toUpperCase();
  if (!currencyCode.safeParse(upper).success)
    throw new InvalidArgumentError('must be an ISO 4217 code such as USD');
  return upper;
};
const nonBlank = (value: string) => {
  if (value.trim() === '') throw new InvalidArgumentError('must not be blank');
  return value.trim();
};
/** Like the names of every other resource (product.md §4): at most 200 characters, one line. */
const institutionName = (value: string) => {
  const name = nonBlank(value);
  if (name.length > 200) throw new InvalidArgumentError('must be at most 200 characters');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name))
    throw new InvalidArgumentError('must not contain control characters');
  return name;
};

async function withPool<T>(action: (pool: DatabasePool) => Promise<T>): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new CliError('Invalid configuration: DATABASE_URL is required');
  const pool = await createDatabasePool(url, { maxPoolSize: 2, applicationName: 'dgs-admin' });
  try {
    const output = await action(pool);
    process.stdout.write(`${JSON.stringify(output)}\n`);
  } finally {
    await pool.end();
  }
}

const program = new Command('admin')
  .description('Operator tool for the donor and gift management service')
  .exitOverride()
  .configureOutput({
    writeOut: (text) => process.stderr.write(text),
    writeErr: (text) => process.stderr.write(text),
    // An error is one line, even when it quotes an argument that holds a line break.
    outputError: (text, write) => write(`${text.trimEnd().replace(/\r?\n/g, '\\n')}\n`),
  });

const institution = program.command('institution').description('Manage institutions');
institution
  .command('create')
  .description('Create an institution and its first API key')
  .requiredOption('--name <name>', 'institution name (at most 200 characters)', institutionName)
  .option('--currency <code>', 'default ISO 4217 currency of its gifts', currency, 'USD')
  .action((options: { name: string; currency: string }) =>
    withPool(async (pool) => {
      const created = await createInstitution(pool, options.name, options.currency);
      const { id, name, currency: code } = created.institution;
      return { institution: { id, name, currency: code }, api_key: created.apiKey };
    }),
  );

const apiKey = program.command('api-key').description('Manage API keys');
apiKey
  .command('create')
  .description('Create another API key for an institution')
  .requiredOption('--institution <id>', 'institution id', positiveInt)
  .option('--name <name>', 'what the key is for (at most 100 characters)', nonBlank)
  .option(
    '--permissions <json>',
    'permission groups to none/read/write, e.g. \'{"*":"read"}\' (default: full access)',
    permissionsOption,
  )
  .action((options: { institution: number; name?: string; permissions?: Permissions }) =>
    withPool(async (pool) => {
      if (!(await findInstitution(pool, options.institution))) {
        throw new CliError(`No institution with id ${options.institution}`);
      }
      if (options.name !== undefined && options.name.length > 100)
        throw new CliError('--name is at most 100 characters');
      return {
        api_key: await insertApiKey(pool, options.institution, {
          ...(options.name !== undefined ? { name: options.name } : {}),
          ...(options.permissions ? { permissions: options.permissions } : {}),
        }),
      };
    }),
  );
apiKey
  .command('list')
  .description('List the API keys of an institution, newest first, with their last use')
  .requiredOption('--institution <id>', 'institution id', positiveInt)
  .action((options: { institution: number }) =>
    withPool(async (pool) => {
      if (!(await findInstitution(pool, options.institution))) {
        throw new CliError(`No institution with id ${options.institution}`);
      }
      return { api_keys: await listApiKeys(pool, options.institution) };
    }),
  );
apiKey
  .command('revoke')
  .description('Revoke an API key; it stops working at once')
  .requiredOption('--id <key id>', 'API key id (key_...)', nonBlank)
  .action((options: { id: string }) =>
    withPool(async (pool) => {
      const revoked = await revokeApiKey(pool, options.id);
      if (!revoked) throw new CliError(`No API key with id ${options.id}`);
      return { api_key: revoked };
    }),
  );

/** A progress bar on stderr when a person is watching; nothing otherwise (stdout stays JSON). */
function seedProgress(total: number): { update(seeded: SeedCounts): void; stop(): void } {
  if (!process.stderr.isTTY) return { update() {}, stop() {} };
  const bar = new SingleBar({
    stream: process.stderr,
    format:
      'seeding {bar} {percentage}% | donors {donors} | funds {funds} | gifts {gifts} | {duration}s',
    hideCursor: true,
  });
  bar.start(total, 0, { donors: 0, funds: 0, gifts: 0 });
  return {
    update: (seeded) => bar.update(seeded.donors + seeded.funds + seeded.gifts, { ...seeded }),
    stop: () => bar.stop(),
  };
}

program
  .command('seed')
  .description('Fill an existing institution with realistic donors, funds and gifts (bulk inserts)')
  .requiredOption('--institution <id>', 'institution id', positiveInt)
  .requiredOption('--donors <n>', 'donors to create, of every role', seedCount)
  .requiredOption('--gifts <n>', 'gifts to create, spread over the new donors and funds', seedCount)
  .option('--funds <n>', 'funds to create', seedCount, DEFAULT_SEED_FUNDS)
  .action((options: { institution: number; donors: number; gifts: number; funds: number }) =>
    withPool(async (pool) => {
      if (!(await findInstitution(pool, options.institution))) {
        throw new CliError(`No institution with id ${options.institution}`);
      }
      const started = performance.now();
      const progress = seedProgress(options.donors + options.funds + options.gifts);
      let seeded: SeedCounts;
      try {
        seeded = await seedInstitution(pool, {
          institutionId: options.institution,
          donors: options.donors,
          gifts: options.gifts,
          funds: options.funds,
          onProgress: progress.update,
        });
      } finally {
        progress.stop();
      }
      const seconds = Math.round(performance.now() - started) / 1000;
      return {
        seeded: { donors: seeded.donors, gifts: seeded.gifts, funds: seeded.funds },
        seconds,
      };
    }),
  );

const webhooks = program.command('webhooks').description('Look after webhook deliveries');
webhooks
  .command('failing')
  .description(
    'Endpoints with failed deliveries lately, most consecutive failures first, across institutions',
  )
  .option('--hours <n>', 'a failed attempt within this many hours', positiveInt, 24)
  .action((options: { hours: number }) =>
    withPool(async (pool) => ({ failing: await failingEndpoints(pool, options.hours) })),
  );
webhooks
  .command('replay')
  .description(
    'Send one event again to one endpoint of the same institution (the worker sends it at once)',
  )
  .requiredOption('--event <evt_id>', 'event id (evt_...)', nonBlank)
  .requiredOption('--endpoint <id>', 'webhook endpoint id', positiveInt)
  .action((options: { event: string; endpoint: number }) =>
    withPool(async (pool) => {
      // A refusal's message goes to stderr as one line, exit status 1.
      return { delivery: await replayEvent(pool, options.event, options.endpoint) };
    }),
  );

program
  .command('import')
  .description(
    'Import a CSV or JSON file of donors or gifts through the API, with a progress bar; prints the finished import',
  )
  .argument('<file>', 'a .csv file (header row) or a .json file ({"rows": [...]})')
  .requiredOption('--resource <resource>', 'donors or gifts', (value) => {
    if (value !== 'donors' && value !== 'gifts')
      throw new InvalidArgumentError('must be donors or gifts');
    return value;
  })
  .option('--api-url <url>', 'the API', process.env.DGS_API_URL ?? 'http://127.0.0.1:3000')
  .option('--dry-run', 'validate every row and write nothing (commit later with the API)')
  .option('--mode <mode>', 'skip_invalid (default) or all_or_nothing')
  .option('--on-match <choice>', 'donor rows matching a donor: error (default), skip or update')
  .option('--expected-rows <n>', 'control total: data rows in the file')
  .option('--expected-amount <amount>', 'control total: the sum of the gifts’ amount')
  .option('--idempotency-key <key>', 'makes a retried import safe (same file, same key)')
  .addHelpText('after', '\nThe API key is read from DGS_API_KEY (never from the command line).')
  .action(
    async (
      file: string,
      options: {
        resource: 'donors' | 'gifts';
        apiUrl: string;
        dryRun?: boolean;
        mode?: string;
        onMatch?: string;
        expectedRows?: string;
        expectedAmount?: string;
        idempotencyKey?: string;
      },
    ) => {
      const apiKey = process.env.DGS_API_KEY;
      if (!apiKey) throw new CliError('Set DGS_API_KEY to an API key of the institution');
      const summary = await importFile({ ...options, file, apiKey, dryRun: !!options.dryRun });
      process.stdout.write(`${JSON.stringify({ import: summary })}\n`);
      if (summary.status === 'failed' || summary.status === 'cancelled')
        throw new ImportError(summary.failure?.message ?? `the import ${summary.status}`);
    },
  );

const donors = program.command('donors').description('Clean up donors');
donors
  .command('merge')
  .description(
    'Merge donor --source into donor --survivor through the API (POST /donors/{id}/merge): a dry run first, its counts on stderr, then the merge; prints both answers. A merge cannot be undone.',
  )
  .requiredOption('--survivor <id>', 'the donor that stays', positiveInt)
  .requiredOption('--source <id>', 'the donor merged into it (a tombstone afterwards)', positiveInt)
  .requiredOption('--institution <id>', 'the institution of the API key, as a check', positiveInt)
  .option('--api-url <url>', 'the API', process.env.DGS_API_URL ?? 'http://127.0.0.1:3000')
  .option('--dry-run', 'stop after the dry run')
  .addHelpText('after', '\nThe API key is read from DGS_API_KEY (never from the command line).')
  .action(
    async (options: {
      survivor: number;
      source: number;
      institution: number;
      apiUrl: string;
      dryRun?: boolean;
    }) => {
      const apiKey = process.env.DGS_API_KEY;
      if (!apiKey) throw new CliError('Set DGS_API_KEY to an API key of the institution');
      const answer = await mergeDonors({ ...options, apiKey, dryRun: !!options.dryRun });
      process.stdout.write(`${JSON.stringify(answer)}\n`);
    },
  );

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exit(error.exitCode === 0 ? 0 : 2);
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`admin: ${message.split('\n')[0]}\n`);
  process.exit(1);
}
