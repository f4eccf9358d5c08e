/**
 * What donors.createValidation, donors.updateValidation and donors.fieldValues share. Every
 * validation rule of a donor (product.md §4 "Donor"), on create and on update. Each failure case
 * runs three ways: the real call, `?dry_run=true` and `Dry-Run: true`. All three must give the
 * same status, code and errors[], and none may write anything.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { expectSameFailureThreeWays } from './threeWays.js';
import { startTestService, type Tenant, type TestService } from './harness.js';

export type Body = Record<string, unknown>;
export type Expected = ReadonlyArray<readonly [param: string, code: string]>;

export let service: TestService;
let other: Tenant;
export const refs = { activeUser: 0, deactivatedUser: 0, foreignUser: 0, patchTarget: 0 };

export const TAKEN_EMAIL = 'Taken.Donor@Example.org';
export const FOREIGN_EMAIL = 'shared.donor@example.org';

async function createUser(email: string, key?: string): Promise<number> {
  const response = await service.call<{ id: number }>('POST', '/api/v1/users', {
    key,
    body: { email, first_name: 'Staff', last_name: 'Member' },
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

async function createDonor(body: Body, key?: string): Promise<number> {
  const response = await service.call<{ id: number }>('POST', '/api/v1/donors', {
    key,
    body,
    headers: { 'Idempotency-Key': randomUUID() },
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

/** Starts the file's own service and creates the records above; call once per test file. */
export function setUpDonorValidationTests(): void {
  beforeAll(async () => {
    service = await startTestService();
    other = await service.createTenant('Other College');

    refs.activeUser = await createUser('active.officer@example.org');
    refs.deactivatedUser = await createUser('gone.officer@example.org');
    const deactivated = await service.call('PATCH', `/api/v1/users/${refs.deactivatedUser}`, {
      body: { status: 'deactivated' },
    });
    expect(deactivated.status).toBe(200);
    refs.foreignUser = await createUser('foreign.officer@example.org', other.key);

    await createDonor({
      role: 'Individual',
      first_name: 'Taken',
      last_name: 'Donor',
      email: TAKEN_EMAIL,
    });
    refs.patchTarget = await createDonor({
      role: 'Individual',
      first_name: 'Pat',
      last_name: 'Smith',
      email: 'pat.smith@example.org',
      assigned_user_id: refs.activeUser,
    });
    await createDonor(
      { role: 'Organization', organization_name: 'Elsewhere Inc', email: FOREIGN_EMAIL },
      other.key,
    );
  });

  afterAll(async () => {
    await service?.close();
  });
}

/** What a write may change: every donor row and every stored idempotency receipt. */
async function snapshot(): Promise<unknown> {
  return {
    donors: await service.db.any(sql.unsafe`SELECT * FROM donors ORDER BY id`),
    receipts: await service.count('write_receipts'),
  };
}

/** The real call, then both dry-run forms, each with its own Idempotency-Key: the same answer, nothing written. */
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
    { headers: () => ({ 'Idempotency-Key': randomUUID() }) },
  );

export const long = (length: number) => 'x'.repeat(length);
export const longEmail = (length: number) =>
  `${'a'.repeat(length - '@example.org'.length)}@example.org`;
export const person = { role: 'Individual', first_name: 'Ada', last_name: 'Lovelace' } as const;

export interface CreateCase {
  name: string;
  body: () => Body;
  expected: Expected;
}
