/** What the funds.*.test.ts files share: the fund shape, the fixture ids and the fund helpers. */
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './harness.js';
import { created } from './responses.js';

export interface Fund {
  id: number;
  object: string;
  name: string;
  code: string;
  description: string | null;
  restriction: string;
  endowed: boolean;
  award_limit: number | null;
  status: string;
  created_at: string;
  updated_at: string;
}

export let service: TestService;
export let other: Tenant;
export const ids = { donor: 0, taken: 0, otherFund: 0 };

export const createFund = (body: Record<string, unknown>, key?: string) =>
  created<Fund>(
    service.call('POST', '/api/v1/funds', {
      key,
      body: { name: `Fund ${String(body.code)}`, ...body },
    }),
  );

/** A valid fund body whose code is free; overrides win, and an `undefined` override drops the field. */
export const fundBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'STEM Endowment',
  code: 'NEVER-CREATED',
  ...overrides,
});

/** A fund as stored, the award limit as the database's own numeric text. */
export interface StoredFund {
  name: string;
  code: string;
  description: string | null;
  restriction: string;
  endowed: boolean;
  award_limit: string | null;
  status: string;
  updated_at: string;
}

export async function fundRow(id: number): Promise<StoredFund | null> {
  const row = await service.db.maybeOne(sql.unsafe`
    SELECT name, code, description, restriction, endowed, award_limit::text AS award_limit, status, updated_at
    FROM funds WHERE id = ${id}`);
  return row as StoredFund | null;
}

/** Starts the file's own service and creates the ids above; call once at the top of a test file. */
export function setUpFundTests(): void {
  beforeAll(async () => {
    service = await startTestService();
    other = await service.createTenant('Other College', 'USD');
    ids.taken = (await createFund({ code: 'TAKEN' })).id;
    ids.otherFund = (await createFund({ code: 'THEIRS', name: 'Their fund' }, other.key)).id;
    ids.donor = (
      await created<{ id: number }>(
        service.call('POST', '/api/v1/donors', {
          body: {
            role: 'Individual',
            first_name: 'Grace',
            last_name: 'Hopper',
            email: 'grace@example.org',
          },
        }),
      )
    ).id;
  });

  afterAll(async () => {
    await service?.close();
  });
}

export type Case = [
  name: string,
  body: () => Record<string, unknown>,
  expected: Array<{ param: string; code: string }>,
];
