import fc from 'fast-check';
import { allRows } from './helpers/allRows.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { checkAfterEveryStep } from './helpers/stepWorld.js';
import { runs } from './helpers/propertyRuns.js';

/**
 * Pledges under any sequence of pledges, payments, refunds, voids, write-offs and cancellations
 * (giving.md §5, §7). After every step, read through the API: each pledge's installments sum to
 * its amount and their amount_paid to its amount_paid; amount_paid + balance +
 * amount_written_off = amount; each pledge's figures and status are what a model predicts, and
 * each operation succeeds exactly when the model says it may; fund gifts_received plus
 * undesignated net gift amounts = the sum of donor total_amount = the sum of the gifts' net
 * amounts; and what open pledges still owe is the same summed over donors, over funds (plus
 * undesignated pledges) and over the receivables report.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: '2026-03-15' });
});

afterAll(async () => {
  await service?.close();
});

const FUNDS = 2;
const DONORS = 2;

type Op =
  | { kind: 'pledge'; donor: number; cents: number; funds: number[]; installments: number }
  | { kind: 'pay'; pledge: number; share: number; tooMuch: boolean; ownFund: boolean }
  | { kind: 'refund'; payment: number; share: number }
  | { kind: 'void'; payment: number }
  | { kind: 'writeOff'; pledge: number }
  | { kind: 'cancel'; pledge: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('pledge' as const),
      donor: fc.nat(DONORS - 1),
      cents: fc.integer({ min: 100, max: 1_000_000 }),
      funds: fc.uniqueArray(fc.nat(FUNDS - 1), { maxLength: FUNDS }),
      installments: fc.integer({ min: 1, max: 12 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('pay' as const),
      pledge: fc.nat(20),
      share: fc.double({ min: 0.05, max: 1, noNaN: true }),
      tooMuch: fc.boolean(),
      ownFund: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      payment: fc.nat(20),
      share: fc.double({ min: 0.05, max: 1, noNaN: true }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('void' as const), payment: fc.nat(20) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('writeOff' as const), pledge: fc.nat(20) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pledge: fc.nat(20) }) },
);

interface ModelPledge {
  id: number;
  donor: number;
  cents: number;
  designated: boolean;
  status: 'open' | 'fulfilled' | 'written_off' | 'cancelled';
  payments: ModelPayment[];
}

interface ModelPayment {
  id: number;
  pledge: ModelPledge;
  cents: number;
  refunded: number;
  voided: boolean;
}

const money = (cents: number) => cents / 100;
const cents = (value: number) => Math.round(value * 100);
const paidOf = (pledge: ModelPledge) =>
  pledge.payments.reduce((sum, p) => sum + (p.voided ? 0 : p.cents - p.refunded), 0);
const writtenOffOf = (pledge: ModelPledge) =>
  pledge.status === 'written_off' ? pledge.cents - paidOf(pledge) : 0;
const balanceOf = (pledge: ModelPledge) => pledge.cents - paidOf(pledge) - writtenOffOf(pledge);
/** What the service does after every change: open ⇄ fulfilled follows the balance. */
const settle = (pledge: ModelPledge) => {
  if (pledge.status === 'open' || pledge.status === 'fulfilled')
    pledge.status = paidOf(pledge) >= pledge.cents ? 'fulfilled' : 'open';
};

interface PledgeBody {
  id: number;
  amount: number;
  amount_paid: number;
  balance: number;
  amount_written_off: number;
  status: string;
  installments: { amount: number; amount_paid: number }[];
}

class World {
  readonly funds: number[] = [];
  readonly donors: number[] = [];
  readonly pledges: ModelPledge[] = [];
  readonly payments: ModelPayment[] = [];

  constructor(readonly tenant: Tenant) {}

  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown) {
    return service.call<T>(method, `/api/v1${path}`, { key: this.tenant.key, body });
  }

  async setUp(): Promise<void> {
    for (let i = 0; i < FUNDS; i += 1)
      this.funds.push(
        (await this.call<{ id: number }>('POST', '/funds', { name: `F${i}`, code: `F${i}` })).body
          .id,
      );
    for (let i = 0; i < DONORS; i += 1)
      this.donors.push(
        (
          await this.call<{ id: number }>('POST', '/donors', {
            role: 'Individual',
            first_name: 'D',
            last_name: String(i),
            email: `d${i}@example.org`,
          })
        ).body.id,
      );
  }

  private pick<T>(list: T[], index: number): T | undefined {
    return list[index % Math.max(1, list.length)];
  }

  async apply(operation: Op): Promise<void> {
    switch (operation.kind) {
      case 'pledge': {
        const parts = operation.funds.map((fund, index) => {
          const each = Math.floor(operation.cents / operation.funds.length);
          const last = operation.cents - each * (operation.funds.length - 1);
          return {
            fund_id: this.funds[fund]!,
            amount: money(index === operation.funds.length - 1 ? last : each),
          };
        });
        const response = await this.call<{ id: number }>('POST', '/pledges', {
          donor_id: this.donors[operation.donor],
          amount: money(operation.cents),
          pledge_date: '2026-01-01',
          designations: parts,
          schedule: {
            frequency: 'monthly',
            installments: operation.installments,
            first_due_on: '2026-01-31',
          },
        });
        expect(response.status).toBe(201);
        this.pledges.push({
          id: response.body.id,
          donor: operation.donor,
          cents: operation.cents,
          designated: parts.length > 0,
          status: 'open',
          payments: [],
        });
        return;
      }
      case 'pay': {
        const pledge = this.pick(this.pledges, operation.pledge);
        if (!pledge) return;
        const balance = balanceOf(pledge);
        const asked = operation.tooMuch ? balance + 1 : Math.floor(balance * operation.share);
        if (asked <= 0) return;
        const response = await this.call<{ id: number }>('POST', '/gifts', {
          donor_id: this.donors[pledge.donor],
          amount: money(asked),
          subject: 'Payment',
          gift_date: '2026-02-01',
          pledge_id: pledge.id,
          ...(operation.ownFund ? { fund_id: this.funds[0] } : {}),
        });
        const allowed = pledge.status === 'open' && asked <= balance;
        expect({ status: response.status, allowed }).toEqual({
          status: allowed ? 201 : 422,
          allowed,
        });
        if (!allowed) return;
        const payment = { id: response.body.id, pledge, cents: asked, refunded: 0, voided: false };
        pledge.payments.push(payment);
        this.payments.push(payment);
        settle(pledge);
        return;
      }
      case 'refund': {
        const payment = this.pick(this.payments, operation.payment);
        if (!payment) return;
        const net = payment.voided ? 0 : payment.cents - payment.refunded;
        const asked = Math.floor(net * operation.share);
        if (asked <= 0) return;
        const gift = await this.call<{ designations: { fund_id: number; amount: number }[] }>(
          'GET',
          `/gifts/${payment.id}`,
        );
        // A split payment says what each fund gives back: all from the first that can.
        let left = asked;
        const designations =
          gift.body.designations.length > 1
            ? gift.body.designations
                .map((part) => {
                  const held =
                    cents(part.amount) -
                    cents((part as { amount_refunded?: number }).amount_refunded ?? 0);
                  const take = Math.min(held, left);
                  left -= take;
                  return { fund_id: part.fund_id, amount: money(take) };
                })
                .filter((part) => part.amount > 0)
            : undefined;
        const response = await this.call('POST', `/gifts/${payment.id}/refunds`, {
          amount: money(asked),
          refund_date: '2026-02-02',
          ...(designations ? { designations } : {}),
        });
        expect(response.status).toBe(201);
        payment.refunded += asked;
        settle(payment.pledge);
        return;
      }
      case 'void': {
        const payment = this.pick(this.payments, operation.payment);
        if (!payment) return;
        const response = await this.call('POST', `/gifts/${payment.id}/void`, { reason: 'x' });
        expect(response.status).toBe(payment.voided ? 409 : 200);
        payment.voided = true;
        settle(payment.pledge);
        return;
      }
      case 'writeOff':
      case 'cancel': {
        const pledge = this.pick(this.pledges, operation.pledge);
        if (!pledge) return;
        const action = operation.kind === 'writeOff' ? 'write-off' : 'cancel';
        const response = await this.call('POST', `/pledges/${pledge.id}/${action}`, {
          reason: 'x',
        });
        const allowed =
          pledge.status === 'open' && (operation.kind === 'writeOff' || paidOf(pledge) === 0);
        expect({ status: response.status, allowed }).toEqual({
          status: allowed ? 200 : 409,
          allowed,
        });
        if (allowed) pledge.status = operation.kind === 'writeOff' ? 'written_off' : 'cancelled';
        return;
      }
    }
  }

  private all<T>(path: string): Promise<T[]> {
    return allRows<T>(service, path, this.tenant.key);
  }

  async check(): Promise<void> {
    const pledges = new Map((await this.all<PledgeBody>('/pledges')).map((p) => [p.id, p]));
    for (const model of this.pledges) {
      const pledge = pledges.get(model.id)!;
      const sum = (values: number[]) => values.reduce((a, b) => a + cents(b), 0);
      expect({
        installments: sum(pledge.installments.map((i) => i.amount)),
        installmentsPaid: sum(pledge.installments.map((i) => i.amount_paid)),
        whole: cents(pledge.amount_paid) + cents(pledge.balance) + cents(pledge.amount_written_off),
        paid: cents(pledge.amount_paid),
        balance: cents(pledge.balance),
        status: pledge.status,
      }).toEqual({
        installments: model.cents,
        installmentsPaid: paidOf(model),
        whole: model.cents,
        paid: paidOf(model),
        balance: balanceOf(model),
        status: model.status,
      });
    }
    const gifts = await this.all<{ net_amount: number; designations: unknown[] }>('/gifts');
    const netOfGifts = gifts.reduce((sum, gift) => sum + cents(gift.net_amount), 0);
    const undesignated = gifts
      .filter((gift) => gift.designations.length === 0)
      .reduce((sum, gift) => sum + cents(gift.net_amount), 0);
    let received = 0;
    let fundsOwed = 0;
    for (const id of this.funds) {
      const totals = (
        await this.call<{ totals: { gifts_received: number; pledged_outstanding: number } }>(
          'GET',
          `/funds/${id}`,
        )
      ).body.totals;
      received += cents(totals.gifts_received);
      fundsOwed += cents(totals.pledged_outstanding);
    }
    let donorsGave = 0;
    let donorsOwe = 0;
    for (const id of this.donors) {
      const giving = (
        await this.call<{ giving: { total_amount: number; pledged_outstanding: number } }>(
          'GET',
          `/donors/${id}`,
        )
      ).body.giving;
      donorsGave += cents(giving.total_amount);
      donorsOwe += cents(giving.pledged_outstanding);
    }
    const modelNet = this.payments.reduce(
      (sum, p) => sum + (p.voided ? 0 : p.cents - p.refunded),
      0,
    );
    const open = this.pledges.filter((p) => p.status === 'open');
    const owed = open.reduce((sum, p) => sum + balanceOf(p), 0);
    const owedUndesignated = open
      .filter((p) => !p.designated)
      .reduce((sum, p) => sum + balanceOf(p), 0);
    const receivables = await this.all<{ balance: number }>('/pledges/receivables');
    expect({
      funds: received + undesignated,
      donors: donorsGave,
      gifts: netOfGifts,
      owedByDonors: donorsOwe,
      owedToFunds: fundsOwed + owedUndesignated,
      receivables: receivables.reduce((sum, row) => sum + cents(row.balance), 0),
      receivableRows: receivables.length,
    }).toEqual({
      funds: modelNet,
      donors: modelNet,
      gifts: modelNet,
      owedByDonors: owed,
      owedToFunds: owed,
      receivables: owed,
      receivableRows: open.length,
    });
  }
}

test('pledge figures and the totals agree after every step of any sequence of pledge operations', async () => {
  await checkAfterEveryStep(op, async () => new World(await service.createTenant()), {
    maxLength: 12,
    numRuns: runs(20),
  });
}, 240_000);
