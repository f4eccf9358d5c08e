/**
 * What the users.*.test.ts files share. Users: the staff who are assigned donors (product.md §4
 * "User"). Validation runs three ways (real call, `?dry_run=true`, `Dry-Run: true`) with identical
 * answers and no writes; then create, retrieve, update (including deactivation) and the absent
 * DELETE.
 */
import { sql } from 'slonik';
import { expectSameFailureThreeWays, type ErrorEnvelope } from './threeWays.js';
import { startTestService, type ApiResponse, type Tenant, type TestService } from './harness.js';

export interface User {
  id: number;
  object: string;
  email: string;
  first_name: string;
  last_name: string;
  role: string;
  status: string;
  created_at: string;
  updated_at: string;
}
export type ErrorBody = ErrorEnvelope['error'];
export type Body = Record<string, unknown>;
export type Expected = ReadonlyArray<readonly [param: string, code: string]>;

export const TAKEN_EMAIL = 'Taken.User@Example.org';
export const FOREIGN_EMAIL = 'foreign.user@example.org';
export const DONOR_EMAIL = 'donor.only@example.org';

export let service: TestService;
let other: Tenant;
export let patchTarget: User;
export let foreignUser: User;

export async function createUser(body: Body, key?: string): Promise<User> {
  const response = await service.call<User>('POST', '/api/v1/users', { body, key });
  expect(response.status).toBe(201);
  return response.body;
}

/** Starts the file's own service and creates the records above; call once per test file. */
export function setUpUserTests(): void {
  beforeAll(async () => {
    service = await startTestService();
    other = await service.createTenant('Other College');
    await createUser({ email: TAKEN_EMAIL, first_name: 'Taken', last_name: 'User' });
    patchTarget = await createUser({
      email: 'patch.me@example.org',
      first_name: 'Patch',
      last_name: 'Target',
      role: 'viewer',
    });
    foreignUser = await createUser(
      { email: FOREIGN_EMAIL, first_name: 'Foreign', last_name: 'User' },
      other.key,
    );
    const donor = await service.call('POST', '/api/v1/donors', {
      body: { role: 'Individual', first_name: 'Donor', last_name: 'Only', email: DONOR_EMAIL },
    });
    expect(donor.status).toBe(201);
  });

  afterAll(async () => {
    await service?.close();
  });
}

export const userRow = (id: number) =>
  service.db.maybeOne(sql.unsafe`SELECT * FROM users WHERE id = ${id}`);

async function snapshot(): Promise<unknown> {
  return {
    users: await service.db.any(sql.unsafe`SELECT * FROM users ORDER BY id`),
    receipts: await service.count('write_receipts'),
  };
}

export function expectError(
  response: ApiResponse,
  status: number,
  type: string,
  code: string,
): ErrorBody {
  expect(response.status).toBe(status);
  const { error } = response.body as unknown as ErrorEnvelope;
  expect(error.type).toBe(type);
  expect(error.code).toBe(code);
  return error;
}

/** The real call, then both dry-run forms: the same answer, nothing written. */
export const runThreeWays = (
  method: 'POST' | 'PATCH',
  path: string,
  body: Body,
  expected: Expected,
) =>
  expectSameFailureThreeWays(
    service,
    path,
    method,
    body,
    expected.map(([param, code]) => ({ param, code })),
    snapshot,
  );

export const long = (length: number) => 'x'.repeat(length);
export const longEmail = (length: number) =>
  `${'a'.repeat(length - '@example.org'.length)}@example.org`;
export const staff = {
  email: 'new.staff@example.org',
  first_name: 'New',
  last_name: 'Staff',
} as const;

export interface Case {
  name: string;
  body: Body;
  expected: Expected;
}
