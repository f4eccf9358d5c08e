import fc from 'fast-check';
import { allRows } from './helpers/allRows.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { checkAfterEveryStep, TenantSteps } from './helpers/stepWorld.js';
import { runs } from './helpers/propertyRuns.js';

/**
 * giving.md §7, over any sequence of money operations: after every step, the sum of fund
 * `gifts_received` plus undesignated net gift amounts equals the sum of donor
 * `giving.total_amount`, equals the sum of non-voided gifts' net amounts (all read through the
 * API); every gift's figures are what a model of the operations predicts; each donor's
 * `soft_credit_total` is what a plain recomputation from the model's gifts gives (each credit
 * amount × net / amount, rounded down to the cent; a voided gift's credits not at all); each
 * operation succeeds exactly when the model says it may; and receipt numbers are exactly 1..N,
 * each receipt keeping its frozen donor name. Merges of donors (constituents.md §5) mix in: the
 * survivor's giving is both donors' before (the model moves the gifts and soft credits as the
 * spec says), and no fund, gift or receipt figure changes.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

const FUNDS = 3;
const DONORS = 3;

type Op =
  | {
      kind: 'gift';
      donor: number;
      cents: number;
      funds: number[];
      cuts: number[];
      /** Soft credits to the next donors, each this share of the gift's amount. */
      soft: number[];
    }
  | { kind: 'refund'; gift: number; share: number; tooMuch: boolean }
  | { kind: 'void'; gift: number }
  | { kind: 'receipt'; gift: number }
  | { kind: 'voidReceipt'; receipt: number }
  | { kind: 'merge'; survivor: number; source: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('gift' as const),
      donor: fc.nat(DONORS - 1),
      cents: fc.integer({ min: 3, max: 1_000_000 }),
      funds: fc.uniqueArray(fc.nat(FUNDS - 1), { maxLength: FUNDS }),
      cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), {
        minLength: FUNDS,
        maxLength: FUNDS,
      }),
      soft: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: DONORS - 1 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      gift: fc.nat(50),
      share: fc.double({ min: 0.05, max: 1, noNaN: true }),
      tooMuch: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('void' as const), gift: fc.nat(50) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('receipt' as const), gift: fc.nat(50) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('voidReceipt' as const), receipt: fc.nat(50) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('merge' as const),
      survivor: fc.nat(DONORS - 1),
      source: fc.nat(DONORS - 1),
    }),
  },
);

interface ModelGift {
  id: number;
  donor: number;
  cents: number;
  /** fund index → [designated cents, refunded cents] */
  parts: Map<number, [number, number]>;
  refunded: number;
  voided: boolean;
  /** donor index → soft-credited cents */
  soft: Map<number, number>;
}

interface ModelReceipt {
  id: number;
  gift: ModelGift;
  issued: boolean;
  /** The donor's name frozen at issue. */
  name: string;
}

const money = (cents: number) => cents / 100;
const net = (gift: ModelGift) => (gift.voided ? 0 : gift.cents - gift.refunded);

/** What the soft credits of the model's gifts give each donor: the plain recomputation. */
function softCredits(gifts: readonly ModelGift[], donor: number) {
  const credited = gifts.filter((gift) => !gift.voided && gift.soft.has(donor));
  const total = credited.reduce(
    (sum, gift) => sum + (BigInt(gift.soft.get(donor)!) * BigInt(net(gift))) / BigInt(gift.cents),
    0n,
  );
  return { total: Number(total), count: credited.length };
}

/** Splits `cents` over `count` parts of at least 1 cent each, at the given cut points. */
function split(cents: number, count: number, cuts: number[]): number[] {
  if (count === 0) return [];
  const spare = cents - count;
  const marks = cuts
    .slice(0, count - 1)
    .map((cut) => Math.floor(cut * spare))
    .sort((a, b) => a - b);
  const bounds = [0, ...marks, spare];
  return bounds.slice(1).map((bound, index) => bound - bounds[index]! + 1);
}

class World extends TenantSteps {
  readonly funds: number[] = [];
  readonly donors: number[] = [];
  readonly gifts: ModelGift[] = [];
  readonly receipts: ModelReceipt[] = [];
  /** Donor index → the index of the donor it was merged into. */
  readonly merged = new Map<number, number>();
  constructor(tenant: Tenant) {
    super(service, tenant);
  }

  async setUp(): Promise<void> {
    for (let i = 0; i < FUNDS; i += 1) {
      const fund = await this.call<{ id: number }>('POST', '/funds', {
        name: `Fund ${i}`,
        code: `F${i}`,
      });
      this.funds.push(fund.body.id);
    }
    for (let i = 0; i < DONORS; i += 1) {
      const donor = await this.call<{ id: number }>('POST', '/donors', {
        role: 'Individual',
        first_name: 'Donor',
        last_name: String(i),
        email: `donor${i}@example.org`,
      });
      this.donors.push(donor.body.id);
    }
  }

  async apply(operation: Op): Promise<void> {
    switch (operation.kind) {
      case 'gift':
        return this.gift(operation);
      case 'refund':
        return this.refund(operation);
      case 'void':
        return this.voidGift(operation.gift);
      case 'receipt':
        return this.receipt(operation.gift);
      case 'voidReceipt':
        return this.voidReceipt(operation.receipt);
      case 'merge':
        return this.merge(operation.survivor, operation.source);
    }
  }

  private async gift(operation: Extract<Op, { kind: 'gift' }>): Promise<void> {
    const amounts = split(operation.cents, operation.funds.length, operation.cuts);
    const designations = operation.funds.map((fund, index) => ({
      fund_id: this.funds[fund]!,
      amount: money(amounts[index]!),
    }));
    const soft = new Map(
      operation.soft.map((share, index) => [
        (operation.donor + 1 + index) % DONORS,
        Math.max(1, Math.floor(share * operation.cents)),
      ]),
    );
    const named = [operation.donor, ...soft.keys()];
    const response = await this.call<{ id: number }>('POST', '/gifts', {
      donor_id: this.donors[operation.donor],
      amount: money(operation.cents),
      subject: 'Property gift',
      gift_date: '2026-01-15',
      designations,
      soft_credits: [...soft].map(([donor, cents]) => ({
        donor_id: this.donors[donor],
        amount: money(cents),
        reason: 'household',
      })),
    });
    // A merged donor is named by nothing new (reference_inactive).
    const allowed = named.every((donor) => !this.merged.has(donor));
    expect({ status: response.status, allowed }).toEqual({
      status: allowed ? 201 : 422,
      allowed,
    });
    if (!allowed) return;
    this.gifts.push({
      id: response.body.id,
      donor: operation.donor,
      cents: operation.cents,
      parts: new Map(operation.funds.map((fund, index) => [fund, [amounts[index]!, 0]])),
      refunded: 0,
      voided: false,
      soft,
    });
  }

  private async refund(operation: Extract<Op, { kind: 'refund' }>): Promise<void> {
    const gift = this.gifts[operation.gift % Math.max(1, this.gifts.length)];
    if (!gift) return;
    // Each fund gives back its share of what it still holds; an undesignated gift its share.
    const shares = [...gift.parts].map(([fund, [held, back]]) => ({
      fund,
      cents: Math.floor((held - back) * operation.share),
    }));
    const cents = gift.parts.size
      ? shares.reduce((sum, share) => sum + share.cents, 0)
      : Math.floor(net(gift) * operation.share);
    const asked = operation.tooMuch ? net(gift) + 1 : cents;
    if (asked <= 0) return;
    const designations = operation.tooMuch
      ? undefined
      : shares
          .filter((share) => share.cents > 0)
          .map((share) => ({ fund_id: this.funds[share.fund]!, amount: money(share.cents) }));
    const response = await this.call('POST', `/gifts/${gift.id}/refunds`, {
      amount: money(asked),
      refund_date: '2026-02-01',
      ...(gift.parts.size > 1 && designations ? { designations } : {}),
    });
    const allowed = !gift.voided && !operation.tooMuch && asked <= net(gift);
    expect({ status: response.status, allowed }).toEqual({
      status: allowed ? 201 : 422,
      allowed,
    });
    if (!allowed) return;
    gift.refunded += asked;
    for (const share of shares) gift.parts.get(share.fund)![1] += share.cents;
    for (const receipt of this.receipts) if (receipt.gift === gift) receipt.issued = false;
  }

  private async voidGift(index: number): Promise<void> {
    const gift = this.gifts[index % Math.max(1, this.gifts.length)];
    if (!gift) return;
    const response = await this.call('POST', `/gifts/${gift.id}/void`, { reason: 'Error' });
    expect(response.status).toBe(gift.voided ? 409 : 200);
    gift.voided = true;
    for (const receipt of this.receipts) if (receipt.gift === gift) receipt.issued = false;
  }

  private async receipt(index: number): Promise<void> {
    const gift = this.gifts[index % Math.max(1, this.gifts.length)];
    if (!gift) return;
    const response = await this.call<{
      id: number;
      number: number;
      amount: number;
      donor_name: string;
    }>('POST', '/receipts', { gift_id: gift.id, issued_on: '2026-03-01' });
    const held = this.receipts.some((receipt) => receipt.gift === gift && receipt.issued);
    const allowed = !gift.voided && net(gift) > 0 && !held;
    expect({ status: response.status, allowed }).toEqual({
      status: allowed ? 201 : 422,
      allowed,
    });
    if (!allowed) return;
    expect(response.body.number).toBe(this.receipts.length + 1);
    expect(response.body.amount).toBe(money(net(gift)));
    expect(response.body.donor_name).toBe(`Donor ${gift.donor}`);
    this.receipts.push({
      id: response.body.id,
      gift,
      issued: true,
      name: response.body.donor_name,
    });
  }

  private async voidReceipt(index: number): Promise<void> {
    const receipt = this.receipts[index % Math.max(1, this.receipts.length)];
    if (!receipt) return;
    const response = await this.call('POST', `/receipts/${receipt.id}/void`, { reason: 'Redo' });
    expect(response.status).toBe(receipt.issued ? 200 : 409);
    receipt.issued = false;
  }

  /**
   * constituents.md §5: the source's gifts become the survivor's; its soft credits too, a credit
   * to the gift's own donor dropped and two to the survivor on one gift made one, capped at the
   * gift's amount. A merge of a donor into itself, of a merged donor or into one is refused.
   */
  private async merge(survivor: number, source: number): Promise<void> {
    const response = await this.call('POST', `/donors/${this.donors[survivor]}/merge`, {
      source_id: this.donors[source],
    });
    if (this.merged.has(survivor)) {
      expect(response.status).toBe(409);
      return;
    }
    const allowed = survivor !== source && !this.merged.has(source);
    expect({ status: response.status, allowed }).toEqual({
      status: allowed ? 200 : 422,
      allowed,
    });
    if (!allowed) return;
    this.merged.set(source, survivor);
    for (const gift of this.gifts) {
      if (gift.donor === source) gift.donor = survivor;
      const moved = gift.soft.get(source);
      gift.soft.delete(source);
      if (moved !== undefined)
        gift.soft.set(survivor, Math.min(gift.cents, (gift.soft.get(survivor) ?? 0) + moved));
      gift.soft.delete(gift.donor);
    }
  }

  private all<T>(path: string): Promise<T[]> {
    return allRows<T>(service, path, this.tenant.key);
  }

  /** giving.md §7, and every gift and receipt as the model has them. */
  async check(): Promise<void> {
    const cents = (value: number) => Math.round(value * 100);
    const gifts = await this.all<{
      id: number;
      status: string;
      net_amount: number;
      amount_refunded: number;
      designations: { fund_id: number; amount: number; amount_refunded: number }[];
    }>('/gifts');
    const byId = new Map(gifts.map((gift) => [gift.id, gift]));
    for (const model of this.gifts) {
      const gift = byId.get(model.id)!;
      expect({
        id: model.id,
        status: gift.status,
        net: cents(gift.net_amount),
        refunded: cents(gift.amount_refunded),
        parts: gift.designations.map((part) => [cents(part.amount), cents(part.amount_refunded)]),
      }).toEqual({
        id: model.id,
        status: model.voided ? 'voided' : 'posted',
        net: net(model),
        refunded: model.refunded,
        parts: [...model.parts.values()],
      });
    }
    const netOfGifts = gifts.reduce((sum, gift) => sum + cents(gift.net_amount), 0);
    const undesignated = gifts
      .filter((gift) => gift.designations.length === 0)
      .reduce((sum, gift) => sum + cents(gift.net_amount), 0);
    let funds = 0;
    for (const id of this.funds) {
      const fund = await this.call<{ totals: { gifts_received: number } }>('GET', `/funds/${id}`);
      funds += cents(fund.body.totals.gifts_received);
    }
    let donors = 0;
    for (const [index, id] of this.donors.entries()) {
      const donor = await this.call<{
        giving: { total_amount: number; soft_credit_total: number; soft_credit_count: number };
      }>('GET', `/donors/${id}`);
      donors += cents(donor.body.giving.total_amount);
      const { soft_credit_total: total, soft_credit_count: count } = donor.body.giving;
      expect({ donor: index, total: cents(total), count }).toEqual({
        donor: index,
        ...softCredits(this.gifts, index),
      });
    }
    const modelNet = this.gifts.reduce((sum, gift) => sum + net(gift), 0);
    expect({ funds: funds + undesignated, donors, gifts: netOfGifts }).toEqual({
      funds: modelNet,
      donors: modelNet,
      gifts: modelNet,
    });

    const receipts = await this.all<{
      id: number;
      number: number;
      status: string;
      donor_name: string;
    }>('/receipts');
    expect(receipts.map((receipt) => receipt.number).sort((a, b) => a - b)).toEqual(
      this.receipts.map((_, index) => index + 1),
    );
    const statusOf = new Map(receipts.map((receipt) => [receipt.id, receipt.status]));
    for (const receipt of this.receipts)
      expect(statusOf.get(receipt.id)).toBe(receipt.issued ? 'issued' : 'void');
    const nameOf = new Map(receipts.map((receipt) => [receipt.id, receipt.donor_name]));
    for (const receipt of this.receipts) expect(nameOf.get(receipt.id)).toBe(receipt.name);
  }
}

test('totals agree, soft credits count by their gifts’ net amounts, and receipt numbers are 1..N after every step of any sequence of money operations and donor merges', async () => {
  await checkAfterEveryStep(op, async () => new World(await service.createTenant()), {
    maxLength: 14,
    numRuns: runs(25),
  });
}, 240_000);
