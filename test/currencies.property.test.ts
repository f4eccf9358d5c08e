import fc from 'fast-check';
import { sql } from 'slonik';
import { allRows } from './helpers/allRows.js';
import type { ApiResponse } from './helpers/harness.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { checkAfterEveryStep } from './helpers/stepWorld.js';
import { runs } from './helpers/propertyRuns.js';

/**
 * giving.md §7 in more than one currency (fundraising.md §2), over any sequence of gifts in
 * several currencies (rates sent or looked up by date), refunds, voids, amount changes, pledges
 * with their payments, write-offs and cancellations, recurring gifts and their payments. After
 * every step every base amount is checked against a plain recomputation from the rows read back,
 * in exact integer cents written here from the spec's words and not taken from the service's
 * code: a gift's base_amount is amount × rate
 * rounded half-even to the cent; its designations' base amounts are it apportioned (each rounded
 * down, the remainder on the last); its refunds give back at the gift's rate and never more than
 * is left, the one that gives back the rest giving back the rest; and every total (donor giving,
 * soft credits, fund totals, pledge and recurring figures, outstanding figures) sums those base
 * amounts. Each operation succeeds exactly when the model says it may, and a request sent again
 * with its Idempotency-Key writes nothing twice.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: '2026-04-15' });
});

afterAll(async () => {
  await service?.close();
});

const BASE = 'USD';
const CURRENCIES = [BASE, 'EUR', 'JPY', 'KWD'] as const;
type Currency = (typeof CURRENCIES)[number];
const FUNDS = 3;
const DONORS = 3;
/** The first is before every rate: a lookup on it finds none. */
const DATES = ['2025-12-20', '2026-01-15', '2026-02-15', '2026-03-15'] as const;
/** Rates with six decimals, below one cent per unit and far above one unit per unit. */
const RATES: Record<Exclude<Currency, 'USD'>, [effectiveOn: string, rate: string][]> = {
  EUR: [
    ['2026-01-01', '1.083517'],
    ['2026-02-01', '1.091234'],
  ],
  JPY: [
    ['2026-01-01', '0.006523'],
    ['2026-03-01', '0.006611'],
  ],
  KWD: [['2026-02-01', '157.123456']],
};
const SENT_RATES = ['0.5', '1.000001', '0.006789', '157.999999', '2.345678'] as const;

// --- Exact arithmetic, in integer cents and millionths of a unit, from fundraising.md §2. ---

const MICRO = 1_000_000n;
const micros = (rate: string | number): bigint => {
  const [whole, fraction = ''] = String(rate).split('.');
  return BigInt(whole!) * MICRO + BigInt(fraction.padEnd(6, '0'));
};
/** A JSON number the service answers with, as the micros it stands for (6 decimals at most). */
const microsOf = (rate: number) => BigInt(Math.round(rate * 1_000_000));
const centsOf = (value: number) => BigInt(Math.round(value * 100));
const money = (cents: bigint | number) => Number(cents) / 100;

/** amount × rate, rounded half-even to the cent: a tie goes to the even cent. */
function halfEven(cents: bigint, rate: bigint): bigint {
  const exact = cents * rate;
  const whole = exact / MICRO;
  const twice = (exact % MICRO) * 2n;
  return twice > MICRO || (twice === MICRO && whole % 2n === 1n) ? whole + 1n : whole;
}

/** `total` over parts in proportion to `weights`: each rounded down, the remainder on the last. */
function apportioned(weights: readonly bigint[], total: bigint): bigint[] {
  const whole = weights.reduce((sum, weight) => sum + weight, 0n);
  if (whole === 0n) return weights.map(() => 0n);
  const shares = weights.map((weight) => (weight * total) / whole);
  const given = shares.reduce((sum, share) => sum + share, 0n);
  if (shares.length) shares[shares.length - 1]! += total - given;
  return shares;
}

/**
 * What a refund gives back in the base currency of something worth `amount` (`base` in the base
 * currency) of which `refunded` (`baseRefunded`) was given back before: the rest of the base
 * amount when it gives back the rest, else `back` at the rate, never more than is left.
 */
function givenBack(
  whole: { amount: bigint; refunded: bigint; base: bigint; baseRefunded: bigint },
  back: bigint,
  rate: bigint,
): bigint {
  const left = whole.base - whole.baseRefunded;
  if (whole.refunded + back >= whole.amount) return left;
  const atRate = halfEven(back, rate);
  return atRate < left ? atRate : left;
}

/** The rate a record in `currency` dated `date` gets: the latest in effect, else none. */
function rateOn(currency: Currency, date: string): bigint | null {
  if (currency === BASE) return MICRO;
  const inEffect = RATES[currency].filter(([effectiveOn]) => effectiveOn <= date);
  return inEffect.length ? micros(inEffect[inEffect.length - 1]![1]) : null;
}

/** What a write that states a rate (or not) is answered: the rate it gets, or its 422's error. */
function judgeRate(
  currency: Currency,
  date: string,
  sent: string | null,
): { rate: bigint } | { problem: string } {
  if (currency === BASE)
    return sent === null ? { rate: MICRO } : { problem: 'exchange_rate:not_allowed' };
  if (sent !== null) return { rate: micros(sent) };
  const rate = rateOn(currency, date);
  return rate === null ? { problem: 'currency:exchange_rate_missing' } : { rate };
}

// --- Operations. ---

const currency = fc.constantFrom(...CURRENCIES);
const foreign = fc.constantFrom(...CURRENCIES.slice(1));
const date = fc.nat(DATES.length - 1);
/** Mostly looked up by date; sometimes sent. */
const sentRate = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom(...SENT_RATES) },
);
/** Now and then a few cents, which at 0.006523 are worth less than a cent of the base. */
const amount = fc.oneof(
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 100 }) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 5_000_000 }) },
);
const share = fc.double({ min: 0.05, max: 1, noNaN: true });
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), {
  minLength: FUNDS,
  maxLength: FUNDS,
});
/** Sometimes the same request again, with the same Idempotency-Key. */
const retry = fc.boolean();

type Op =
  | {
      kind: 'gift';
      donor: number;
      currency: Currency;
      cents: number;
      date: number;
      rate: string | null;
      funds: number[];
      cuts: number[];
      /** Soft credits to the next donors, each this share of the gift's amount. */
      soft: number[];
      retry: boolean;
    }
  | { kind: 'refund'; gift: number; share: number; full: boolean; retry: boolean }
  | { kind: 'void'; gift: number }
  | {
      kind: 'patch';
      gift: number;
      cents: number;
      date: number | null;
      rate: string | null;
      cuts: number[];
    }
  | {
      kind: 'pledge';
      donor: number;
      currency: Currency;
      cents: number;
      date: number;
      rate: string | null;
      funds: number[];
      retry: boolean;
    }
  | {
      kind: 'close';
      pledge: number;
      writeOff: boolean;
    }
  | {
      kind: 'pay';
      pledge: number;
      share: number;
      full: boolean;
      date: number;
      wrongCurrency: boolean;
      retry: boolean;
    }
  | {
      kind: 'recurring';
      donor: number;
      currency: Currency;
      cents: number;
      date: number;
      rate: string | null;
    }
  | {
      kind: 'recurringPay';
      recurring: number;
      currency: Currency;
      cents: number;
      date: number;
      rate: string | null;
      retry: boolean;
    };

const funds = fc.uniqueArray(fc.nat(FUNDS - 1), { maxLength: FUNDS });

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('gift' as const),
      donor: fc.nat(DONORS - 1),
      currency,
      cents: amount,
      date,
      rate: sentRate,
      funds,
      cuts,
      soft: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 2 }),
      retry,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      gift: fc.nat(50),
      share,
      full: fc.boolean(),
      retry,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('void' as const), gift: fc.nat(50) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('patch' as const),
      gift: fc.nat(50),
      cents: amount,
      date: fc.option(date, { nil: null }),
      rate: sentRate,
      cuts,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('pledge' as const),
      donor: fc.nat(DONORS - 1),
      currency: fc.oneof({ weight: 1, arbitrary: currency }, { weight: 3, arbitrary: foreign }),
      cents: fc.integer({ min: 100, max: 5_000_000 }),
      date,
      rate: sentRate,
      funds,
      retry,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('close' as const),
      pledge: fc.nat(20),
      writeOff: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('pay' as const),
      pledge: fc.nat(20),
      share,
      full: fc.boolean(),
      date,
      wrongCurrency: fc.nat(3).map((draw) => draw === 0),
      retry,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('recurring' as const),
      donor: fc.nat(DONORS - 1),
      currency,
      cents: fc.integer({ min: 100, max: 500_000 }),
      date,
      rate: sentRate,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('recurringPay' as const),
      recurring: fc.nat(20),
      currency,
      cents: amount,
      date,
      rate: sentRate,
      retry,
    }),
  },
);

// --- The model: what was asked for and accepted. Base amounts are not modelled but recomputed. ---

interface ModelGift {
  id: number;
  donor: number;
  currency: Currency;
  cents: number;
  rate: bigint;
  date: string;
  /** fund index → [designated cents, refunded cents], in the order sent */
  parts: Map<number, [number, number]>;
  refunded: number;
  refunds: number;
  voided: boolean;
  /** donor index → soft-credited cents */
  soft: Map<number, number>;
  pledge: ModelPledge | null;
}

interface ModelPledge {
  id: number;
  donor: number;
  currency: Currency;
  cents: number;
  rate: bigint;
  date: number;
  designated: boolean;
  status: 'open' | 'fulfilled' | 'written_off' | 'cancelled';
  payments: ModelGift[];
}

interface ModelRecurring {
  id: number;
  donor: number;
  rate: bigint;
  date: number;
}

const netOf = (gift: ModelGift) => (gift.voided ? 0 : gift.cents - gift.refunded);
const paidOf = (pledge: ModelPledge) =>
  pledge.payments.reduce((sum, payment) => sum + netOf(payment), 0);
/** A written-off pledge owes nothing; a cancelled one (nothing paid) still shows its amount. */
const balanceOf = (pledge: ModelPledge) =>
  pledge.status === 'written_off' ? 0 : Math.max(0, pledge.cents - paidOf(pledge));
/** What the service does after a payment, refund or void: open ⇄ fulfilled follows the balance. */
const settle = (pledge: ModelPledge | null) => {
  if (pledge && (pledge.status === 'open' || pledge.status === 'fulfilled'))
    pledge.status = paidOf(pledge) >= pledge.cents ? 'fulfilled' : 'open';
};

/** Splits `cents` over `count` parts of at least 1 cent each, at the given cut points. */
function split(cents: number, count: number, at: number[]): number[] {
  if (count === 0) return [];
  const spare = cents - count;
  const marks = at
    .slice(0, count - 1)
    .map((cut) => Math.floor(cut * spare))
    .sort((a, b) => a - b);
  const bounds = [0, ...marks, spare];
  return bounds.slice(1).map((bound, index) => bound - bounds[index]! + 1);
}

/** The `param:code` of each problem of an error answer. */
function problems(response: ApiResponse): string[] {
  const error = (
    response.body as {
      error?: { code: string; param?: string; errors?: { param: string; code: string }[] };
    }
  ).error;
  if (!error) return [];
  return (
    error.errors?.map((problem) => `${problem.param}:${problem.code}`) ?? [
      `${error.param ?? ''}:${error.code}`,
    ]
  );
}

/** What the service answers, read back for the recomputation. */
interface GiftBody {
  id: number;
  status: string;
  amount: number;
  currency: string;
  exchange_rate: number | null;
  base_amount: number | null;
  amount_refunded: number;
  net_amount: number;
  donor_id: number;
  pledge_id: number | null;
  recurring_gift_id: number | null;
  designations: { fund_id: number; amount: number; amount_refunded: number; base_amount: number }[];
  soft_credits: { donor_id: number; amount: number; base_amount: number }[];
}

interface RefundRow {
  id: number;
  gift_id: number;
  amount: string;
  base_amount: string;
  designations: { fund_id: number; amount: number; base_amount: number }[];
}

interface PledgeBody {
  id: number;
  donor_id: number;
  amount: number;
  currency: string;
  exchange_rate: number;
  base_amount: number;
  amount_paid: number;
  balance: number;
  base_amount_paid: number;
  base_balance: number;
  status: string;
  designations: unknown[];
}

class World {
  readonly funds: number[] = [];
  readonly donors: number[] = [];
  readonly gifts: ModelGift[] = [];
  readonly pledges: ModelPledge[] = [];
  readonly recurring: ModelRecurring[] = [];
  private refundCount = 0;
  private step = 0;

  constructor(readonly tenant: Tenant) {}

  /** A read, or a write with a new Idempotency-Key (sent once more when `again`). */
  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    again = false,
  ): Promise<ApiResponse<T>> {
    this.step += 1;
    const send = () =>
      service.call<T>(method, `/api/v1${path}`, {
        key: this.tenant.key,
        body,
        headers: body === undefined ? {} : { 'Idempotency-Key': `step-${this.step}` },
      });
    const first = await send();
    if (!again) return first;
    const replay = await send();
    // A 2xx is kept and replayed as it was; a refusal is not kept, so it is judged again alike.
    const seen = (response: ApiResponse<T>, replayed: string | null) =>
      response.status < 300
        ? { status: response.status, body: response.body, replayed }
        : { status: response.status, problems: problems(response as ApiResponse) };
    expect(seen(replay, replay.headers.get('Idempotent-Replayed'))).toEqual(seen(first, 'true'));
    return first;
  }

  async setUp(): Promise<void> {
    for (const [code, rates] of Object.entries(RATES))
      for (const [effectiveOn, rate] of rates) {
        const response = await this.call('POST', '/exchange-rates', {
          currency: code,
          rate: Number(rate),
          effective_on: effectiveOn,
        });
        expect(response.status).toBe(201);
      }
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

  private pick<T>(list: T[], index: number): T | undefined {
    return list[index % Math.max(1, list.length)];
  }

  async apply(operation: Op): Promise<void> {
    switch (operation.kind) {
      case 'gift':
        return this.gift(operation);
      case 'refund':
        return this.refund(operation);
      case 'void':
        return this.voidGift(operation.gift);
      case 'patch':
        return this.patch(operation);
      case 'pledge':
        return this.pledge(operation);
      case 'close':
        return this.close(operation);
      case 'pay':
        return this.pay(operation);
      case 'recurring':
        return this.startRecurring(operation);
      case 'recurringPay':
        return this.payRecurring(operation);
    }
  }

  /** Expects the answer the model predicts: 201 (or `success`), else 422 with `problem`. */
  private expectJudged(
    response: ApiResponse,
    judged: { rate: bigint } | { problem: string },
    success = 201,
  ): judged is { rate: bigint } {
    if ('rate' in judged) {
      expect({ status: response.status, problems: problems(response) }).toEqual({
        status: success,
        problems: [],
      });
      return true;
    }
    expect({ status: response.status, problems: problems(response) }).toEqual({
      status: 422,
      problems: expect.arrayContaining([judged.problem]) as unknown,
    });
    return false;
  }

  private async gift(operation: Extract<Op, { kind: 'gift' }>): Promise<void> {
    const chosen = operation.funds.slice(0, operation.cents);
    const amounts = split(operation.cents, chosen.length, operation.cuts);
    const soft = new Map(
      operation.soft.map((part, index) => [
        (operation.donor + 1 + index) % DONORS,
        Math.max(1, Math.floor(part * operation.cents)),
      ]),
    );
    const giftDate = DATES[operation.date]!;
    const response = await this.call<{ id: number }>(
      'POST',
      '/gifts',
      {
        donor_id: this.donors[operation.donor],
        amount: money(operation.cents),
        currency: operation.currency,
        ...(operation.rate === null ? {} : { exchange_rate: Number(operation.rate) }),
        subject: 'Property gift',
        gift_date: giftDate,
        designations: chosen.map((fund, index) => ({
          fund_id: this.funds[fund],
          amount: money(amounts[index]!),
        })),
        soft_credits: [...soft].map(([donor, cents]) => ({
          donor_id: this.donors[donor],
          amount: money(cents),
          reason: 'household',
        })),
      },
      operation.retry,
    );
    const judged = judgeRate(operation.currency, giftDate, operation.rate);
    if (!this.expectJudged(response, judged)) return;
    this.gifts.push({
      id: response.body.id,
      donor: operation.donor,
      currency: operation.currency,
      cents: operation.cents,
      rate: judged.rate,
      date: giftDate,
      parts: new Map(chosen.map((fund, index) => [fund, [amounts[index]!, 0]])),
      refunded: 0,
      refunds: 0,
      voided: false,
      soft,
      pledge: null,
    });
  }

  private async refund(operation: Extract<Op, { kind: 'refund' }>): Promise<void> {
    const gift = this.pick(this.gifts, operation.gift);
    if (!gift) return;
    const portion = (left: number) => (operation.full ? left : Math.floor(left * operation.share));
    // Each fund gives back its portion of what it still holds; an undesignated gift its portion.
    const shares = [...gift.parts].map(([fund, [held, back]]) => ({
      fund,
      cents: portion(held - back),
    }));
    const asked = gift.parts.size
      ? shares.reduce((sum, part) => sum + part.cents, 0)
      : portion(gift.cents - gift.refunded);
    if (asked <= 0) return;
    const response = await this.call(
      'POST',
      `/gifts/${gift.id}/refunds`,
      {
        amount: money(asked),
        refund_date: '2026-04-01',
        ...(gift.parts.size > 1
          ? {
              designations: shares
                .filter((part) => part.cents > 0)
                .map((part) => ({ fund_id: this.funds[part.fund], amount: money(part.cents) })),
            }
          : {}),
      },
      operation.retry,
    );
    expect({ status: response.status, voided: gift.voided }).toEqual({
      status: gift.voided ? 422 : 201,
      voided: gift.voided,
    });
    if (gift.voided) return;
    gift.refunded += asked;
    gift.refunds += 1;
    this.refundCount += 1;
    settle(gift.pledge);
    for (const part of shares) gift.parts.get(part.fund)![1] += part.cents;
  }

  private async voidGift(index: number): Promise<void> {
    const gift = this.pick(this.gifts, index);
    if (!gift) return;
    const response = await this.call('POST', `/gifts/${gift.id}/void`, { reason: 'Error' });
    expect(response.status).toBe(gift.voided ? 409 : 200);
    gift.voided = true;
    settle(gift.pledge);
  }

  /** A new amount (and sometimes a new date or rate): refused once the gift has a history. */
  private async patch(operation: Extract<Op, { kind: 'patch' }>): Promise<void> {
    const gift = this.pick(this.gifts, operation.gift);
    // A pledge payment's amount is bound by its pledge's balance: pledges.property covers it.
    if (!gift || gift.pledge) return;
    const cents = Math.max(operation.cents, gift.parts.size);
    const amounts = split(cents, gift.parts.size, operation.cuts);
    const newDate = operation.date === null ? null : DATES[operation.date];
    const response = await this.call('PATCH', `/gifts/${gift.id}`, {
      amount: money(cents),
      ...(newDate === null ? {} : { gift_date: newDate }),
      ...(operation.rate === null ? {} : { exchange_rate: Number(operation.rate) }),
      ...(gift.parts.size
        ? {
            designations: [...gift.parts.keys()].map((fund, index) => ({
              fund_id: this.funds[fund],
              amount: money(amounts[index]!),
            })),
          }
        : {}),
    });
    if (gift.voided || gift.refunded > 0) {
      expect(response.status).toBe(409);
      return;
    }
    const dateChanged = newDate !== null && newDate !== gift.date;
    // The rate it has stays unless a rate is sent or the date changes.
    const judged: { rate: bigint } | { problem: string } =
      operation.rate === null && !dateChanged
        ? { rate: gift.rate }
        : judgeRate(gift.currency, newDate ?? gift.date, operation.rate);
    const tooSmall = [...gift.soft.values()].some((credit) => credit > cents);
    if (tooSmall) {
      expect({ status: response.status, problems: problems(response) }).toEqual({
        status: 422,
        problems: expect.arrayContaining([
          expect.stringMatching(/^soft_credits\.\d+\.amount:out_of_range$/),
        ]) as unknown,
      });
      return;
    }
    if (!this.expectJudged(response, judged, 200)) return;
    gift.cents = cents;
    gift.rate = judged.rate;
    gift.date = newDate ?? gift.date;
    gift.parts = new Map([...gift.parts.keys()].map((fund, index) => [fund, [amounts[index]!, 0]]));
  }

  private async pledge(operation: Extract<Op, { kind: 'pledge' }>): Promise<void> {
    const pledgeDate = DATES[operation.date]!;
    const count = operation.funds.length;
    const each = Math.floor(operation.cents / Math.max(1, count));
    const response = await this.call<{ id: number }>(
      'POST',
      '/pledges',
      {
        donor_id: this.donors[operation.donor],
        amount: money(operation.cents),
        currency: operation.currency,
        ...(operation.rate === null ? {} : { exchange_rate: Number(operation.rate) }),
        pledge_date: pledgeDate,
        designations: operation.funds.map((fund, index) => ({
          fund_id: this.funds[fund],
          amount: money(index === count - 1 ? operation.cents - each * (count - 1) : each),
        })),
        schedule: { frequency: 'monthly', installments: 3, first_due_on: '2026-04-30' },
      },
      operation.retry,
    );
    const judged = judgeRate(operation.currency, pledgeDate, operation.rate);
    if (!this.expectJudged(response, judged)) return;
    this.pledges.push({
      id: response.body.id,
      donor: operation.donor,
      currency: operation.currency,
      cents: operation.cents,
      rate: judged.rate,
      date: operation.date,
      designated: count > 0,
      status: 'open',
      payments: [],
    });
  }

  /** A write-off (of what is left) or a cancellation (nothing paid) of an open pledge. */
  private async close(operation: Extract<Op, { kind: 'close' }>): Promise<void> {
    const pledge = this.pick(this.pledges, operation.pledge);
    if (!pledge) return;
    const action = operation.writeOff ? 'write-off' : 'cancel';
    const response = await this.call('POST', `/pledges/${pledge.id}/${action}`, { reason: 'x' });
    const allowed = pledge.status === 'open' && (operation.writeOff || paidOf(pledge) === 0);
    expect({ status: response.status, allowed }).toEqual({
      status: allowed ? 200 : 409,
      allowed,
    });
    if (allowed) pledge.status = operation.writeOff ? 'written_off' : 'cancelled';
  }

  /** A payment in the pledge's currency, at the rate of its own date. */
  private async pay(operation: Extract<Op, { kind: 'pay' }>): Promise<void> {
    const pledge = this.pick(this.pledges, operation.pledge);
    if (!pledge || pledge.status !== 'open') return;
    const balance = balanceOf(pledge);
    const cents = operation.full ? balance : Math.floor(balance * operation.share);
    if (cents <= 0) return;
    const giftDate = DATES[Math.max(operation.date, pledge.date)]!;
    const other = CURRENCIES.find((code) => code !== pledge.currency)!;
    const response = await this.call<{ id: number }>(
      'POST',
      '/gifts',
      {
        donor_id: this.donors[pledge.donor],
        amount: money(cents),
        ...(operation.wrongCurrency ? { currency: other } : {}),
        subject: 'Pledge payment',
        gift_date: giftDate,
        pledge_id: pledge.id,
      },
      operation.retry,
    );
    const judged = operation.wrongCurrency
      ? { problem: 'currency:invalid_value' }
      : judgeRate(pledge.currency, giftDate, null);
    if (!this.expectJudged(response, judged)) return;
    const payment: ModelGift = {
      id: response.body.id,
      donor: pledge.donor,
      currency: pledge.currency,
      cents,
      rate: judged.rate,
      date: giftDate,
      parts: new Map(),
      refunded: 0,
      refunds: 0,
      voided: false,
      soft: new Map(),
      pledge,
    };
    // The payment's designations are its pledge's pro rata: read back rather than modelled.
    const read = await this.call<GiftBody>('GET', `/gifts/${payment.id}`);
    for (const part of read.body.designations)
      payment.parts.set(this.funds.indexOf(part.fund_id), [Number(centsOf(part.amount)), 0]);
    pledge.payments.push(payment);
    settle(pledge);
    this.gifts.push(payment);
  }

  private async startRecurring(operation: Extract<Op, { kind: 'recurring' }>): Promise<void> {
    const startOn = DATES[operation.date]!;
    const response = await this.call<{ id: number }>('POST', '/recurring-gifts', {
      donor_id: this.donors[operation.donor],
      amount: money(operation.cents),
      currency: operation.currency,
      ...(operation.rate === null ? {} : { exchange_rate: Number(operation.rate) }),
      frequency: 'monthly',
      start_on: startOn,
    });
    const judged = judgeRate(operation.currency, startOn, operation.rate);
    if (!this.expectJudged(response, judged)) return;
    this.recurring.push({
      id: response.body.id,
      donor: operation.donor,
      rate: judged.rate,
      date: operation.date,
    });
  }

  /** A payment of a recurring gift: a gift like any other, in whatever currency it came in. */
  private async payRecurring(operation: Extract<Op, { kind: 'recurringPay' }>): Promise<void> {
    const recurring = this.pick(this.recurring, operation.recurring);
    if (!recurring) return;
    const giftDate = DATES[Math.max(operation.date, recurring.date)]!;
    const response = await this.call<{ id: number }>(
      'POST',
      '/gifts',
      {
        donor_id: this.donors[recurring.donor],
        amount: money(operation.cents),
        currency: operation.currency,
        ...(operation.rate === null ? {} : { exchange_rate: Number(operation.rate) }),
        subject: 'Monthly gift',
        gift_date: giftDate,
        recurring_gift_id: recurring.id,
      },
      operation.retry,
    );
    const judged = judgeRate(operation.currency, giftDate, operation.rate);
    if (!this.expectJudged(response, judged)) return;
    this.gifts.push({
      id: response.body.id,
      donor: recurring.donor,
      currency: operation.currency,
      cents: operation.cents,
      rate: judged.rate,
      date: giftDate,
      parts: new Map(),
      refunded: 0,
      refunds: 0,
      voided: false,
      soft: new Map(),
      pledge: null,
    });
  }

  private all<T>(path: string): Promise<T[]> {
    return allRows<T>(service, path, this.tenant.key);
  }

  /** Every figure read back, against the model and the recomputation from the rows. */
  async check(): Promise<void> {
    const institution = this.tenant.institutionId;
    const gifts = new Map((await this.all<GiftBody>('/gifts')).map((gift) => [gift.id, gift]));
    const refunds = (await service.db.any(sql.unsafe`
      SELECT id, gift_id, amount::text, base_amount::text, designations
      FROM gift_refunds WHERE institution_id = ${institution} ORDER BY id`)) as readonly RefundRow[];
    const stored = new Map(
      (
        (await service.db.any(sql.unsafe`
          SELECT id, base_amount_refunded::text, designations FROM gifts
          WHERE institution_id = ${institution}`)) as readonly {
          id: number;
          base_amount_refunded: string;
          designations: { fund_id: number; base_amount_refunded: number }[];
        }[]
      ).map((row) => [row.id, row]),
    );

    // Nothing written twice: as many rows as the model has, whatever was sent again.
    const counts = await service.db.one(sql.unsafe`
      SELECT (SELECT count(*)::int FROM gifts WHERE institution_id = ${institution}) AS gifts,
             (SELECT count(*)::int FROM gift_refunds WHERE institution_id = ${institution}) AS refunds,
             (SELECT count(*)::int FROM pledges WHERE institution_id = ${institution}) AS pledges,
             (SELECT count(*)::int FROM recurring_gifts WHERE institution_id = ${institution})
               AS recurring`);
    expect(counts).toEqual({
      gifts: this.gifts.length,
      refunds: this.refundCount,
      pledges: this.pledges.length,
      recurring: this.recurring.length,
    });

    /** gift id → its net base amount; fund id → what it holds; donor id → its credits. */
    const netBase = new Map<number, bigint>();
    const fundHolds = new Map<number, bigint>(this.funds.map((id) => [id, 0n]));
    const donorGave = new Map<number, bigint>(this.donors.map((id) => [id, 0n]));
    const donorSoft = new Map<number, bigint>(this.donors.map((id) => [id, 0n]));
    const donorCredits = new Map<number, number>(this.donors.map((id) => [id, 0]));
    for (const model of this.gifts) {
      const gift = gifts.get(model.id)!;
      const rate = microsOf(gift.exchange_rate!);
      const amount = centsOf(gift.amount);
      const base = halfEven(amount, rate);
      const partBases = apportioned(
        gift.designations.map((part) => centsOf(part.amount)),
        base,
      );
      expect({
        gift: model.id,
        status: gift.status,
        amount: Number(amount),
        currency: gift.currency,
        rate,
        net: gift.net_amount,
        parts: gift.designations.map((part) => [
          this.funds.indexOf(part.fund_id),
          Number(centsOf(part.amount)),
          Number(centsOf(part.amount_refunded)),
        ]),
        base: centsOf(gift.base_amount!),
        partBases: gift.designations.map((part) => centsOf(part.base_amount)),
        softBases: gift.soft_credits.map((credit) => centsOf(credit.base_amount)),
      }).toEqual({
        gift: model.id,
        status: model.voided ? 'voided' : 'posted',
        amount: model.cents,
        currency: model.currency,
        rate: model.rate,
        net: money(netOf(model)),
        parts: [...model.parts].map(([fund, [held, back]]) => [fund, held, back]),
        base,
        partBases,
        // A soft credit at the gift's rate, never more than the gift's base amount.
        softBases: gift.soft_credits.map((credit) => {
          const atRate = halfEven(centsOf(credit.amount), rate);
          return atRate < base ? atRate : base;
        }),
      });
      expect(partBases.reduce((sum, part) => sum + part, 0n)).toBe(
        gift.designations.length ? base : 0n,
      );

      // The refunds, in the order they were made, each against what was left before it.
      const own = refunds.filter((refund) => refund.gift_id === model.id);
      expect(own).toHaveLength(model.refunds);
      const refunded = gift.designations.map(() => ({ amount: 0n, base: 0n }));
      let whole = { amount: 0n, base: 0n };
      for (const refund of own) {
        const back = BigInt(Math.round(Number(refund.amount) * 100));
        let expected: bigint;
        let parts: bigint[] = [];
        if (!gift.designations.length) {
          expected = givenBack(
            { amount, refunded: whole.amount, base, baseRefunded: whole.base },
            back,
            rate,
          );
        } else {
          parts = refund.designations.map((part) => {
            const index = gift.designations.findIndex((mine) => mine.fund_id === part.fund_id);
            const before = refunded[index]!;
            const given = givenBack(
              {
                amount: centsOf(gift.designations[index]!.amount),
                refunded: before.amount,
                base: partBases[index]!,
                baseRefunded: before.base,
              },
              centsOf(part.amount),
              rate,
            );
            refunded[index] = {
              amount: before.amount + centsOf(part.amount),
              base: before.base + given,
            };
            return given;
          });
          expected = parts.reduce((sum, part) => sum + part, 0n);
        }
        whole = { amount: whole.amount + back, base: whole.base + expected };
        expect({
          refund: refund.id,
          base: BigInt(Math.round(Number(refund.base_amount) * 100)),
          parts: refund.designations.map((part) => centsOf(part.base_amount)),
        }).toEqual({ refund: refund.id, base: expected, parts });
      }
      // Never more than the gift's base amount; exactly it once the gift is all given back.
      expect(whole.base <= base).toBe(true);
      if (whole.amount === amount) expect(whole.base).toBe(base);
      const row = stored.get(model.id)!;
      expect({
        baseRefunded: BigInt(Math.round(Number(row.base_amount_refunded) * 100)),
        parts: row.designations.map((part) => centsOf(part.base_amount_refunded)),
      }).toEqual({ baseRefunded: whole.base, parts: refunded.map((part) => part.base) });

      const net = gift.status === 'voided' ? 0n : base - whole.base;
      netBase.set(model.id, net);
      if (gift.status === 'voided') continue;
      donorGave.set(gift.donor_id, donorGave.get(gift.donor_id)! + net);
      gift.designations.forEach((part, index) =>
        fundHolds.set(
          part.fund_id,
          fundHolds.get(part.fund_id)! + partBases[index]! - refunded[index]!.base,
        ),
      );
      // A soft credit counts in proportion to its gift's net base amount, rounded down.
      for (const credit of gift.soft_credits) {
        const counted = base === 0n ? 0n : (centsOf(credit.base_amount) * net) / base;
        donorSoft.set(credit.donor_id, donorSoft.get(credit.donor_id)! + counted);
        donorCredits.set(credit.donor_id, donorCredits.get(credit.donor_id)! + 1);
      }
    }

    // Pledges: the base of what was promised, paid and still owed.
    const pledges = new Map((await this.all<PledgeBody>('/pledges')).map((p) => [p.id, p]));
    const storedBalance = new Map(
      (
        (await service.db.any(sql.unsafe`
          SELECT id, base_balance::text FROM pledges WHERE institution_id = ${institution}`)) as readonly {
          id: number;
          base_balance: string;
        }[]
      ).map((row) => [row.id, BigInt(Math.round(Number(row.base_balance) * 100))]),
    );
    const donorOwes = new Map<number, bigint>(this.donors.map((id) => [id, 0n]));
    let owed = 0n;
    let owedUndesignated = 0n;
    for (const model of this.pledges) {
      const pledge = pledges.get(model.id)!;
      const rate = microsOf(pledge.exchange_rate);
      const balance = centsOf(pledge.balance);
      const open = pledge.status === 'open';
      const baseBalance = halfEven(balance, rate);
      expect({
        pledge: model.id,
        currency: pledge.currency,
        rate,
        paid: Number(centsOf(pledge.amount_paid)),
        balance: Number(balance),
        status: pledge.status,
        base: centsOf(pledge.base_amount),
        basePaid: centsOf(pledge.base_amount_paid),
        baseBalance: centsOf(pledge.base_balance),
        stored: storedBalance.get(model.id),
      }).toEqual({
        pledge: model.id,
        currency: model.currency,
        rate: model.rate,
        paid: paidOf(model),
        balance: balanceOf(model),
        status: model.status,
        base: halfEven(centsOf(pledge.amount), rate),
        basePaid: model.payments.reduce((sum, payment) => sum + netBase.get(payment.id)!, 0n),
        baseBalance,
        // What the totals sum: nothing once it is no longer open.
        stored: open ? baseBalance : 0n,
      });
      if (!open) continue;
      donorOwes.set(pledge.donor_id, donorOwes.get(pledge.donor_id)! + baseBalance);
      owed += baseBalance;
      if (!pledge.designations.length) owedUndesignated += baseBalance;
    }

    // Recurring gifts: the base of each payment, net of refunds, voided ones left out.
    const recurring = await this.all<{
      id: number;
      amount: number;
      exchange_rate: number;
      base_amount: number;
      total_given: number;
    }>('/recurring-gifts');
    for (const model of this.recurring) {
      const found = recurring.find((row) => row.id === model.id)!;
      const given = [...gifts.values()]
        .filter((gift) => gift.recurring_gift_id === model.id)
        .reduce((sum, gift) => sum + netBase.get(gift.id)!, 0n);
      expect({
        recurring: model.id,
        rate: microsOf(found.exchange_rate),
        base: centsOf(found.base_amount),
        given: centsOf(found.total_given),
      }).toEqual({
        recurring: model.id,
        rate: model.rate,
        base: halfEven(centsOf(found.amount), model.rate),
        given,
      });
    }

    for (const id of this.donors) {
      const donor = await this.call<{
        giving: {
          total_amount: number;
          soft_credit_total: number;
          soft_credit_count: number;
          pledged_outstanding: number;
        };
      }>('GET', `/donors/${id}`);
      expect(donor.status).toBe(200);
      const giving = donor.body.giving;
      expect({
        donor: id,
        total: centsOf(giving.total_amount),
        soft: centsOf(giving.soft_credit_total),
        credits: giving.soft_credit_count,
        owes: centsOf(giving.pledged_outstanding),
      }).toEqual({
        donor: id,
        total: donorGave.get(id),
        soft: donorSoft.get(id),
        credits: donorCredits.get(id),
        owes: donorOwes.get(id),
      });
    }
    let fundsOwed = 0n;
    for (const id of this.funds) {
      const fund = await this.call<{
        totals: { gifts_received: number; pledged_outstanding: number };
      }>('GET', `/funds/${id}`);
      expect(fund.status).toBe(200);
      expect({ fund: id, received: centsOf(fund.body.totals.gifts_received) }).toEqual({
        fund: id,
        received: fundHolds.get(id),
      });
      fundsOwed += centsOf(fund.body.totals.pledged_outstanding);
    }
    const receivables = await this.all<{ base_balance: number }>('/pledges/receivables');
    expect({
      owedToFunds: fundsOwed + owedUndesignated,
      receivables: receivables.reduce((sum, row) => sum + centsOf(row.base_balance), 0n),
    }).toEqual({ owedToFunds: owed, receivables: owed });

    // Campaign progress and appeal results (fundraising.md §3) are checked the same way, after
    // every step of coded gifts in two currencies, in campaignLines.property.test.ts.
  }
}

test('base amounts are the amounts at their rates, rounded half-even, and every total sums them, after every step of any sequence of operations in several currencies', async () => {
  await checkAfterEveryStep(op, async () => new World(await service.createTenant()), {
    minLength: 8,
    maxLength: 16,
    numRuns: runs(15),
  });
}, 240_000);

test('a soft credit of a gift worth less than a cent of the base currency counts 0 and is still counted', async () => {
  const tenant = await service.createTenant();
  const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    service.call<T>(method, `/api/v1${path}`, { key: tenant.key, body });
  const [giver, credited] = await Promise.all(
    ['Giver', 'Credited'].map(async (name) => {
      const donor = await call<{ id: number }>('POST', '/donors', {
        role: 'Individual',
        first_name: name,
        last_name: 'Donor',
        email: `${name.toLowerCase()}@example.org`,
      });
      expect(donor.status).toBe(201);
      return donor.body.id;
    }),
  );
  // 0.50 JPY at 0.006523 is 0.0032615 USD: half-even to 0.00.
  const gift = await call<{ id: number; base_amount: number; soft_credits: unknown[] }>(
    'POST',
    '/gifts',
    {
      donor_id: giver,
      amount: 0.5,
      currency: 'JPY',
      exchange_rate: 0.006523,
      subject: 'Small change',
      gift_date: '2026-01-15',
      soft_credits: [{ donor_id: credited, amount: 0.5, reason: 'household' }],
    },
  );
  expect(gift.status).toBe(201);
  expect({ base: gift.body.base_amount, credits: gift.body.soft_credits }).toEqual({
    base: 0,
    credits: [{ donor_id: credited, amount: 0.5, reason: 'household', base_amount: 0 }],
  });
  expect(
    await service.db.one(sql.unsafe`
      SELECT base_amount::text, soft_credits -> 0 ->> 'base_amount' AS credit_base
      FROM gifts WHERE id = ${gift.body.id}`),
  ).toEqual({ base_amount: '0.00', credit_base: '0' });
  const giving = async (id: number | undefined) =>
    (await call<{ giving: Record<string, unknown> }>('GET', `/donors/${id}`)).body.giving;
  expect(await giving(giver)).toMatchObject({ total_amount: 0, gift_count: 1 });
  expect(await giving(credited)).toMatchObject({ soft_credit_total: 0, soft_credit_count: 1 });
});
