import { spawn } from 'node:child_process';
import path from 'node:path';
import { sql } from 'slonik';
import { startTestService, type TestService } from './helpers/harness.js';
import { waitFor } from './helpers/wait.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface CreatedInstitution {
  institution: { id: number; name: string; currency: string };
  api_key: { id: string; key: string };
}

interface InstitutionBody {
  id: number;
  object: string;
  name: string;
  currency: string;
  created_at: string;
}

const adminJs = path.resolve(process.cwd(), 'dist/cli/admin.js');
const isoMillis = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

/** The built CLI (npm test builds first), run as the operator runs it, against this file's database. */
function runCommand(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: env as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const withDatabase = () => ({ ...process.env, DATABASE_URL: service.config.DATABASE_URL });
const admin = (...args: string[]) =>
  runCommand(process.execPath, [adminJs, ...args], withDatabase());

/** stdout is exactly one JSON object on one line; returns it. */
function singleJsonObject<T>(run: Run): T {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  expect(run.stdout.endsWith('\n')).toBe(true);
  expect(run.stdout.trimEnd().split('\n')).toHaveLength(1);
  const parsed: unknown = JSON.parse(run.stdout);
  expect(parsed).toBeInstanceOf(Object);
  expect(Array.isArray(parsed)).toBe(false);
  return parsed as T;
}

/** A failure: non-zero exit, nothing on stdout, exactly one non-empty line on stderr. */
function expectOneLineFailure(run: Run, mentions: RegExp): void {
  expect(run.code).not.toBe(0);
  expect(run.code).not.toBeNull();
  expect(run.stdout).toBe('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]?.trim().length).toBeGreaterThan(0);
  expect(run.stderr).toMatch(mentions);
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

async function operatorRows(): Promise<{ institutions: number; apiKeys: number; revoked: number }> {
  const row = (await service.db.one(sql.unsafe`
    SELECT (SELECT count(*)::int FROM institutions) AS institutions,
           (SELECT count(*)::int FROM api_keys) AS api_keys,
           (SELECT count(*)::int FROM api_keys WHERE revoked_at IS NOT NULL) AS revoked`)) as Record<
    string,
    unknown
  >;
  return {
    institutions: Number(row.institutions),
    apiKeys: Number(row.api_keys),
    revoked: Number(row.revoked),
  };
}

const institutionVia = (key: string) =>
  service.call<InstitutionBody>('GET', '/api/v1/institution', { key });

describe('institution create', () => {
  test('prints exactly one JSON object with the institution and a key that works against the API', async () => {
    const created = singleJsonObject<CreatedInstitution>(
      await admin('institution', 'create', '--name', 'Acme University'),
    );
    expect(created).toEqual({
      institution: { id: expect.any(Number), name: 'Acme University', currency: 'USD' },
      api_key: { id: expect.stringMatching(/^key_/), key: expect.any(String) },
    });
    expect(created.institution.id).not.toBe(service.tenant.institutionId);

    const row = (await service.db.one(
      sql.unsafe`SELECT name, currency FROM institutions WHERE id = ${created.institution.id}`,
    )) as Record<string, unknown>;
    expect(row).toEqual({ name: 'Acme University', currency: 'USD' });
    const keyRow = await service.db.one(
      sql.unsafe`SELECT institution_id::int, revoked_at FROM api_keys WHERE id = ${created.api_key.id}`,
    );
    expect(keyRow).toEqual({ institution_id: created.institution.id, revoked_at: null });

    const response = await institutionVia(created.api_key.key);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: created.institution.id,
      object: 'institution',
      name: 'Acme University',
      currency: 'USD',
      fiscal_year_start_month: 1,
      consent_mode: 'opt_out',
      created_at: expect.stringMatching(isoMillis),
    });
  });

  test.each([
    ['EUR', 'EUR'],
    ['gbp', 'GBP'],
  ])('--currency %s gives an institution in %s', async (given, stored) => {
    const created = singleJsonObject<CreatedInstitution>(
      await admin('institution', 'create', '--name', `College ${given}`, '--currency', given),
    );
    expect(created.institution.currency).toBe(stored);
    const response = await institutionVia(created.api_key.key);
    expect(response.body.currency).toBe(stored);
  });

  test('the name is trimmed', async () => {
    const created = singleJsonObject<CreatedInstitution>(
      await admin('institution', 'create', '--name', '  Université de Test  '),
    );
    expect(created.institution.name).toBe('Université de Test');
    expect((await institutionVia(created.api_key.key)).body.name).toBe('Université de Test');
  });

  test('the same command run through npm (npm run -s admin --) also prints one JSON object', async () => {
    const run = await runCommand(
      'npm',
      [
        'run',
        '-s',
        'admin',
        '--',
        'institution',
        'create',
        '--name',
        'Through Npm',
        '--currency',
        'USD',
      ],
      withDatabase(),
    );
    const created = singleJsonObject<CreatedInstitution>(run);
    expect(created.institution.name).toBe('Through Npm');
    expect((await institutionVia(created.api_key.key)).status).toBe(200);
  });
});

describe('api-key create and revoke', () => {
  test('a second key works for the same institution, and revoking it stops it at once', async () => {
    const institution = singleJsonObject<CreatedInstitution>(
      await admin('institution', 'create', '--name', 'Keyed College'),
    );
    const institutionId = String(institution.institution.id);

    const second = singleJsonObject<{ api_key: { id: string; key: string } }>(
      await admin('api-key', 'create', '--institution', institutionId),
    );
    expect(second).toEqual({
      api_key: { id: expect.stringMatching(/^key_/), key: expect.any(String) },
    });
    expect(second.api_key.id).not.toBe(institution.api_key.id);
    expect(second.api_key.key).not.toBe(institution.api_key.key);

    const [viaFirst, viaSecond] = await Promise.all([
      institutionVia(institution.api_key.key),
      institutionVia(second.api_key.key),
    ]);
    expect(viaSecond.status).toBe(200);
    expect(viaSecond.body).toEqual(viaFirst.body);
    expect(viaSecond.body.name).toBe('Keyed College');

    const revoked = singleJsonObject<{ api_key: { id: string; revoked_at: string } }>(
      await admin('api-key', 'revoke', '--id', second.api_key.id),
    );
    expect(revoked).toEqual({
      api_key: { id: second.api_key.id, revoked_at: expect.stringMatching(isoMillis) },
    });
    const stored = await service.db.oneFirst(
      sql.unsafe`SELECT revoked_at FROM api_keys WHERE id = ${second.api_key.id}`,
    );
    expect(stored).toBe(revoked.api_key.revoked_at);

    const refused = await service.call<{ error: { type: string; code: string } }>(
      'GET',
      '/api/v1/institution',
      {
        key: second.api_key.key,
      },
    );
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({
      type: 'authentication_error',
      code: 'invalid_api_key',
    });
    // The institution's first key is untouched.
    expect((await institutionVia(institution.api_key.key)).status).toBe(200);
  });

  test('revoking a key that is already revoked succeeds and reports the first revocation time', async () => {
    const institution = singleJsonObject<CreatedInstitution>(
      await admin('institution', 'create', '--name', 'Twice College'),
    );
    const first = singleJsonObject<{ api_key: { revoked_at: string } }>(
      await admin('api-key', 'revoke', '--id', institution.api_key.id),
    );
    const second = singleJsonObject<{ api_key: { revoked_at: string } }>(
      await admin('api-key', 'revoke', '--id', institution.api_key.id),
    );
    expect(second).toEqual(first);
    expect((await institutionVia(institution.api_key.key)).status).toBe(401);
  });
});

describe('api-key create with permissions, and list', () => {
  test('a key with the permissions given reads and is refused writes; the list shows its last use', async () => {
    const institution = singleJsonObject<CreatedInstitution>(
      await admin('institution', 'create', '--name', 'Scoped College'),
    );
    const institutionId = String(institution.institution.id);
    const reader = singleJsonObject<{ api_key: { id: string; key: string } }>(
      await admin(
        'api-key',
        'create',
        '--institution',
        institutionId,
        '--name',
        'Data warehouse',
        '--permissions',
        '{"*":"read"}',
      ),
    );
    expect((await institutionVia(reader.api_key.key)).status).toBe(200);
    const write = await service.call('POST', '/api/v1/tags', {
      key: reader.api_key.key,
      body: { name: 'x' },
    });
    expect(write.status).toBe(403);

    await waitFor(async () => {
      const listed = singleJsonObject<{ api_keys: { id: string; last_used_at: string | null }[] }>(
        await admin('api-key', 'list', '--institution', institutionId),
      );
      return listed.api_keys.some((key) => key.id === reader.api_key.id && key.last_used_at);
    });
    const listed = singleJsonObject<{ api_keys: Record<string, unknown>[] }>(
      await admin('api-key', 'list', '--institution', institutionId),
    );
    expect(listed.api_keys.map((key) => [key.id, key.name, key.permissions])).toEqual([
      [reader.api_key.id, 'Data warehouse', { '*': 'read' }],
      [institution.api_key.id, 'Operator key', { '*': 'write' }],
    ]);
    expect(JSON.stringify(listed)).not.toContain(reader.api_key.key);
  });

  test.each([
    ['{"owners":"read"}', /owners/],
    ['{"gifts":"admin"}', /gifts/],
    ['not json', /JSON/],
  ])('--permissions %s is refused in one line', async (permissions, mentions) => {
    expectOneLineFailure(
      await admin('api-key', 'create', '--institution', '1', '--permissions', permissions),
      mentions,
    );
  });
});

// Each failure is a process of its own that writes nothing: they run side by side.
describe('failures', () => {
  const withoutDatabaseUrl = () => {
    const env: Record<string, string | undefined> = { ...process.env };
    delete env.DATABASE_URL;
    return env;
  };

  test.concurrent.each([
    [
      'api-key create for a missing institution',
      ['api-key', 'create', '--institution', '999999'],
      /999999/,
    ],
    [
      'api-key create with a non-numeric institution',
      ['api-key', 'create', '--institution', 'abc'],
      /institution/,
    ],
    [
      'api-key create with institution 0',
      ['api-key', 'create', '--institution', '0'],
      /institution/,
    ],
    [
      'api-key create with an institution id beyond bigint',
      ['api-key', 'create', '--institution', '99999999999999999999'],
      /institution/,
    ],
    ['api-key create without --institution', ['api-key', 'create'], /institution/],
    [
      'api-key revoke of an unknown id',
      ['api-key', 'revoke', '--id', 'key_0000000000000000'],
      /key_0000000000000000/,
    ],
    ['api-key revoke without --id', ['api-key', 'revoke'], /--id/],
    ['institution create without --name', ['institution', 'create'], /--name/],
    [
      'institution create with a blank --name',
      ['institution', 'create', '--name', '   '],
      /--name/,
    ],
    [
      'institution create with a name over 200 characters',
      ['institution', 'create', '--name', 'x'.repeat(201)],
      /200/,
    ],
    [
      'institution create with a line break in the name',
      ['institution', 'create', '--name', 'Acme\nUniversity'],
      /--name/,
    ],
    [
      'institution create with an unknown --currency',
      ['institution', 'create', '--name', 'Bad', '--currency', 'XYZ'],
      /currency/,
    ],
    [
      'institution create with a two-letter --currency',
      ['institution', 'create', '--name', 'Bad', '--currency', 'US'],
      /currency/,
    ],
    [
      'institution create with an unknown option',
      ['institution', 'create', '--name', 'Bad', '--colour', 'red'],
      /colour/,
    ],
    ['an unknown command', ['institutions', 'list'], /institutions/],
  ])(
    '%s exits non-zero with one line on stderr and nothing on stdout',
    async (_label, args, mentions) => {
      const before = await operatorRows();
      expectOneLineFailure(await admin(...args), mentions);
      expect(await operatorRows()).toEqual(before);
    },
  );

  test.concurrent.each([
    ['no', undefined],
    ['an empty', ''],
  ])(
    '%s DATABASE_URL exits non-zero with one line on stderr and nothing on stdout',
    async (_label, url) => {
      const before = await operatorRows();
      const env = { ...withoutDatabaseUrl(), ...(url === undefined ? {} : { DATABASE_URL: url }) };
      const run = await runCommand(
        process.execPath,
        [adminJs, 'institution', 'create', '--name', 'No Database'],
        env,
      );
      expectOneLineFailure(run, /DATABASE_URL/);
      expect(await operatorRows()).toEqual(before);
    },
  );

  test.concurrent(
    'an unreachable database exits non-zero with one line on stderr and nothing on stdout',
    async () => {
      const run = await runCommand(
        process.execPath,
        [adminJs, 'institution', 'create', '--name', 'Unreachable'],
        { ...withoutDatabaseUrl(), DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' },
      );
      expectOneLineFailure(run, /./);
    },
  );
});
