/**
 * What the giftRefunds.*.test.ts and giftVoid.test.ts files share: a donor, funds, gifts made
 * through the API, a receipt written straight into its table (receipts have their own API, not
 * needed here), and the totals and stored state that refunds and voids must move or leave.
 */
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './harness.js';
import { created } from './responses.js';

export interface Gift {
  id: number;
  amount: number;
  gift_date: string;
  status: string;
  amount_refunded: number;
  net_amount: number;
  fund_id: number | null;
  designations: { fund_id: number; amount: number; amount_refunded: number }[];
  void_reason: string | null;
  voided_at: string | null;
  updated_at: string;
  [field: string]: unknown;
}

export interface Refund {
  id: number;
  object: string;
  gift_id: number;
  amount: number;
  refund_date: string;
  reason: string | null;
  designations: { fund_id: number; amount: number }[];
  created_at: string;
}

export let service: TestService;
export let other: Tenant;
export const ids = { donor: 0, otherDonor: 0, otherFund: 0, otherGift: 0 };
let counter = 0;

export const createFund = async (key?: string) =>
  (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/funds', {
        key,
        body: { name: `Fund ${++counter}`, code: `F-${counter}` },
      }),
    )
  ).id;

/** A gift of the main tenant's donor; `designations` as the gift create takes them. */
export const createGift = (
  amount: number,
  designations: { fund_id: number; amount: number }[] = [],
  extra: Record<string, unknown> = {},
) =>
  created<Gift>(
    service.call('POST', '/api/v1/gifts', {
      body: {
        donor_id: ids.donor,
        amount,
        subject: `Gift ${++counter}`,
        gift_date: '2026-03-15',
        designations,
        ...extra,
      },
    }),
  );

export const refundsPath = (giftId: number) => `/api/v1/gifts/${giftId}/refunds`;

export const refund = (giftId: number, body: Record<string, unknown>, key?: string) =>
  created<Refund>(service.call('POST', refundsPath(giftId), { body, key }));

/** An issued receipt of the gift, as the receipts resource would write one. */
export async function issueReceipt(giftId: number): Promise<number> {
  return Number(
    await service.db.oneFirst(sql.unsafe`
      INSERT INTO receipts (institution_id, number, gift_id, donor_id, issued_on, amount,
                            benefit_amount, deductible_amount, currency, donor_name)
      SELECT institution_id,
             (SELECT coalesce(max(number), 0) + 1 FROM receipts r WHERE r.institution_id = g.institution_id),
             id, donor_id, gift_date, amount - amount_refunded, 0, amount - amount_refunded,
             currency, 'Ada Lovelace'
      FROM gifts g WHERE id = ${giftId}
      RETURNING id`),
  );
}

export const receiptState = (receiptId: number) =>
  service.db.one(sql.unsafe`
    SELECT status, void_reason, voided_at IS NOT NULL AS voided FROM receipts WHERE id = ${receiptId}`) as Promise<{
    status: string;
    void_reason: string | null;
    voided: boolean;
  }>;

/** What refunds and voids change in the database, for "nothing changed" comparisons. */
export const moneyState = async () => ({
  gifts: await service.db.any(sql.unsafe`
    SELECT id, status, amount_refunded::text, designations, void_reason, voided_at, updated_at
    FROM gifts ORDER BY id`),
  refunds: await service.db.any(sql.unsafe`SELECT * FROM gift_refunds ORDER BY id`),
  receipts: await service.db.any(
    sql.unsafe`SELECT id, status, updated_at FROM receipts ORDER BY id`,
  ),
});

export const fundReceived = async (fundId: number) => {
  const response = await service.call<{ totals: { gifts_received: number } }>(
    'GET',
    `/api/v1/funds/${fundId}`,
  );
  return response.body.totals.gifts_received;
};

export const donorGiving = async (donorId = ids.donor) => {
  const response = await service.call<{ giving: { total_amount: number; gift_count: number } }>(
    'GET',
    `/api/v1/donors/${donorId}`,
  );
  return response.body.giving;
};

export const getGift = async (giftId: number) =>
  (await service.call<Gift>('GET', `/api/v1/gifts/${giftId}`)).body;

/** Starts the file's own service, with a second worker when asked; call once per test file. */
export function setUpRefundTests(options: { workers?: number } = {}): void {
  beforeAll(async () => {
    service = await startTestService();
    for (let extra = 1; extra < (options.workers ?? 1); extra += 1) await service.startWorker();
    other = await service.createTenant('Other College', 'USD');
    const donor = (key: string | undefined, email: string) =>
      created<{ id: number }>(
        service.call('POST', '/api/v1/donors', {
          key,
          body: { role: 'Individual', first_name: 'Ada', last_name: 'Lovelace', email },
        }),
      );
    ids.donor = (await donor(undefined, 'ada@example.org')).id;
    ids.otherDonor = (await donor(other.key, 'ada@example.org')).id;
    ids.otherFund = await createFund(other.key);
    ids.otherGift = (
      await created<{ id: number }>(
        service.call('POST', '/api/v1/gifts', {
          key: other.key,
          body: {
            donor_id: ids.otherDonor,
            amount: 50,
            subject: 'Theirs',
            gift_date: '2026-01-01',
            fund_id: ids.otherFund,
          },
        }),
      )
    ).id;
  });

  afterAll(async () => {
    await service?.close();
  });
}
