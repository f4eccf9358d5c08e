/** What the gifts.*.test.ts files share: the gift shape, the fixture ids and the gift helpers. */
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './harness.js';
import { created } from './responses.js';

export interface Gift {
  id: number;
  object: string;
  donor_id: number;
  recurring_gift_id: number | null;
  amount: number;
  currency: string;
  exchange_rate: number | null;
  base_amount: number | null;
  subject: string;
  gift_date: string;
  type: string;
  check_number: string | null;
  fund_id: number | null;
  designations: {
    fund_id: number;
    amount: number;
    amount_refunded: number;
    base_amount: number | null;
    campaign_id?: number | null;
    appeal_id?: number | null;
  }[];
  soft_credits: { donor_id: number; amount: number; reason: string; base_amount: number | null }[];
  matches_gift_id: number | null;
  matched_by_gift_ids: number[];
  benefit_amount: number;
  status: 'posted' | 'voided';
  amount_refunded: number;
  net_amount: number;
  void_reason: string | null;
  voided_at: string | null;
  tribute: Record<string, unknown> | null;
  campaign_id?: number | null;
  appeal_id?: number | null;
  created_at: string;
  updated_at: string;
}

/**
 * The money fields of a new gift of `amount` in the base currency, designated whole to `fundId`
 * when given.
 */
export const freshMoney = (amount: number, fundId: number | null = null) => ({
  recurring_gift_id: null,
  exchange_rate: 1,
  base_amount: amount,
  designations:
    fundId === null
      ? []
      : [
          {
            fund_id: fundId,
            amount,
            amount_refunded: 0,
            base_amount: amount,
            campaign_id: null,
            appeal_id: null,
          },
        ],
  soft_credits: [],
  matches_gift_id: null,
  matched_by_gift_ids: [],
  benefit_amount: 0,
  status: 'posted',
  amount_refunded: 0,
  net_amount: amount,
  void_reason: null,
  voided_at: null,
  pledge_id: null,
  tribute: null,
  campaign_id: null,
  appeal_id: null,
});

export let service: TestService;
export let other: Tenant;
/** Ids created in beforeAll that the case tables refer to. */
export const ids = {
  donor: 0,
  fund: 0,
  closedFund: 0,
  otherDonor: 0,
  otherFund: 0,
  otherGift: 0,
};

export const createDonor = (email: string, key?: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/donors', {
      key,
      body: { role: 'Individual', first_name: 'Ada', last_name: 'Lovelace', email },
    }),
  );

export const createFund = (code: string, extra: Record<string, unknown> = {}, key?: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/funds', { key, body: { name: `Fund ${code}`, code, ...extra } }),
  );

/** A valid gift body for the main tenant; overrides win, and an `undefined` override drops the field. */
export const giftBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  donor_id: ids.donor,
  amount: 25,
  subject: 'Annual fund',
  gift_date: '2026-03-15',
  ...overrides,
});

/** A gift as stored, money and date as the database's own text. */
export interface StoredGift {
  donor_id: number;
  amount: string;
  currency: string;
  subject: string;
  gift_date: string;
  type: string;
  check_number: string | null;
  fund_id: number | null;
  updated_at: string;
}

export async function giftRow(id: number): Promise<StoredGift | null> {
  const row = await service.db.maybeOne(sql.unsafe`
    SELECT donor_id, amount::text AS amount, currency, subject, gift_date::text AS gift_date, type,
           check_number, updated_at,
           CASE WHEN jsonb_array_length(designations) = 1
                THEN (designations -> 0 ->> 'fund_id')::int END AS fund_id
    FROM gifts WHERE id = ${id}`);
  return row as StoredGift | null;
}

/** Starts the file's own service and creates the ids above; call once at the top of a test file. */
/** `overrides`: the service's settings, as startTestService takes them. */
export function setUpGiftTests(overrides: Partial<Record<string, string>> = {}): void {
  beforeAll(async () => {
    service = await startTestService(overrides);
    other = await service.createTenant('Other College', 'USD');
    ids.donor = (await createDonor('ada@example.org')).id;
    ids.fund = (await createFund('GENERAL')).id;
    ids.closedFund = (await createFund('OLD-FUND', { status: 'closed' })).id;
    ids.otherDonor = (await createDonor('ada@example.org', other.key)).id;
    ids.otherFund = (await createFund('GENERAL', {}, other.key)).id;
    ids.otherGift = (
      await created<Gift>(
        service.call('POST', '/api/v1/gifts', {
          key: other.key,
          body: { donor_id: ids.otherDonor, amount: 5, subject: 'Theirs', gift_date: '2026-01-01' },
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
