/** What the donors.*.test.ts CRUD files share: the donor shape and the donor helpers. */
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { startTestService, type ApiResponse, type Tenant, type TestService } from './harness.js';

export interface Giving {
  total_amount: number;
  gift_count: number;
  first_gift_date: string | null;
  last_gift_date: string | null;
}
export interface Donor {
  id: number;
  object: string;
  role: string;
  display_name: string;
  first_name: string | null;
  last_name: string | null;
  organization_name: string | null;
  email: string | null;
  phone: string | null;
  address: Record<string, string | null> | null;
  assigned_user_id: number | null;
  status: string;
  gives_anonymously: boolean;
  emails: { address: string; type: string; status: string }[];
  phones: { number: string; type: string; status: string }[];
  addresses: (Record<string, string | null> & { type: string; status: string })[];
  mailing_address: Record<string, string | null> | null;
  giving?: Giving;
  created_at: string;
  updated_at: string;
}
export interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    errors?: { param: string; code: string }[];
  };
}
export type Body = Record<string, unknown>;

export let service: TestService;
export let other: Tenant;
export let officerId: number;

/** Starts the file's own service and creates a gift officer; call once per test file. */
export function setUpDonorTests(): void {
  beforeAll(async () => {
    service = await startTestService();
    other = await service.createTenant('Other College');
    const officer = await service.call<{ id: number }>('POST', '/api/v1/users', {
      body: { email: 'officer@example.org', first_name: 'Grace', last_name: 'Hopper' },
    });
    expect(officer.status).toBe(201);
    officerId = officer.body.id;
  });

  afterAll(async () => {
    await service?.close();
  });
}

export const withKey = (headers: Record<string, string> = {}) => ({
  'Idempotency-Key': randomUUID(),
  ...headers,
});

export async function create(body: Body, key?: string): Promise<Donor> {
  const response = await service.call<Donor>('POST', '/api/v1/donors', {
    body,
    key,
    headers: withKey(),
  });
  expect(response.status).toBe(201);
  return response.body;
}

export async function createGift(donorId: number, amount: number, giftDate: string): Promise<void> {
  const response = await service.call('POST', '/api/v1/gifts', {
    body: { donor_id: donorId, amount, subject: 'Annual fund', gift_date: giftDate },
    headers: withKey(),
  });
  expect(response.status).toBe(201);
}

export const donorRow = (id: number) =>
  service.db.maybeOne(sql.unsafe`SELECT * FROM donors WHERE id = ${id}`);
export const donorCount = () => service.count('donors');

export function expectError(
  response: ApiResponse,
  status: number,
  type: string,
  code: string,
): void {
  expect(response.status).toBe(status);
  const { error } = response.body as unknown as ErrorEnvelope;
  expect(error.type).toBe(type);
  expect(error.code).toBe(code);
}
