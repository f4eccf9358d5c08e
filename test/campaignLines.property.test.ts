import fc from 'fast-check';
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { checkAfterEveryStep } from './helpers/stepWorld.js';

/**
 * fundraising.md §3, over any sequence of coded gifts (in the base currency or another, split or
 * not, codes on the gift and on its designations; one at a time, or several sent at once, which a
 * worker commits together in one statement with their lines and totals), recodings, refunds,
 * voids and deletes: after
 * every step `gift_lines` holds exactly the lines a plain recomputation from the gifts gives
 * (a designation's own pair of codes when it carries one, else the gift's; a line coded only to
 * an appeal takes the appeal's campaign; its base amount net of refunds; counted while posted),
 * and every campaign's progress and every appeal's results are the recomputed lines summed: a
 * campaign's of its tree, whole, by appeal and by fund, each list summing exactly to `raised`,
 * with its distinct gifts and donors.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

/** Code choices: an index into the world's campaigns or appeals, or none. */
const code = (count: number) => fc.option(fc.nat(count - 1), { nil: null });
const codes = fc.record({ campaign: code(4), appeal: code(3) });

type Codes = { campaign: number | null; appeal: number | null };
interface GiftOp {
  kind: 'gift';
  donor: number;
  cents: number;
  foreign: boolean;
  codes: Codes;
  parts: Codes[];
}
type Op =
  | GiftOp
  | { kind: 'burst'; gifts: GiftOp[] }
  | { kind: 'recode'; gift: number; codes: Codes; part: Codes | null }
  | { kind: 'refund'; gift: number; share: number }
  | { kind: 'void'; gift: number }
  | { kind: 'delete'; gift: number };

const gift: fc.Arbitrary<GiftOp> = fc.record({
  kind: fc.constant('gift' as const),
  donor: fc.nat(1),
  cents: fc.integer({ min: 3, max: 100_000 }),
  foreign: fc.boolean(),
  codes,
  parts: fc.array(codes, { maxLength: 3 }),
});

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: gift },
  // Gifts sent at once, which a worker commits together, many coded gifts to one statement.
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('burst' as const),
      gifts: fc.array(gift, { minLength: 2, maxLength: 6 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('recode' as const),
      gift: fc.nat(20),
      codes,
      part: fc.option(codes, { nil: null }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      gift: fc.nat(20),
      share: fc.double({ min: 0.05, max: 1, noNaN: true }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('void' as const), gift: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), gift: fc.nat(20) }) },
);

interface Line {
  gift_id: number;
  line: number;
  donor_id: number;
  fund_id: number | null;
  campaign_id: number | null;
  appeal_id: number | null;
  base_net: string | null;
  counted: boolean;
}

interface StoredPart {
  fund_id: number;
  amount: number;
  base_amount?: number;
  base_amount_refunded?: number;
  campaign_id?: number;
  appeal_id?: number;
}

interface StoredGift {
  id: number;
  donor_id: number;
  status: string;
  base_amount: string | null;
  base_amount_refunded: string;
  campaign_id: number | null;
  appeal_id: number | null;
  designations: StoredPart[];
}

const centsOf = (value: string | number) => Math.round(Number(value) * 100);
const text = (cents: number) => (cents / 100).toFixed(2);

interface Progress {
  raised: number;
  gift_count: number;
  donor_count: number;
  percent_of_goal: number | null;
  by_appeal: { appeal_id: number | null; raised: number }[];
  by_fund: { fund_id: number | null; raised: number }[];
}

interface Results {
  raised: number;
  gift_count: number;
  donor_count: number;
  cost: number | null;
  cost_per_unit_raised: number | null;
}

/** `raised` by a line's key, in cents, ordered by id with the null key last, as the API orders. */
function sumsBy(lines: readonly Line[], key: (line: Line) => number | null) {
  const sums = new Map<number | null, number>();
  for (const line of lines)
    sums.set(key(line), (sums.get(key(line)) ?? 0) + centsOf(line.base_net!));
  return [...sums].sort(([a], [b]) => (a === null ? 1 : b === null ? -1 : a - b));
}

const distinctCount = (values: readonly number[]) => new Set(values).size;

class World {
  readonly donors: number[] = [];
  readonly funds: number[] = [];
  /** The tree: campaigns[0] with campaigns[1] and campaigns[2] under it; campaigns[3] apart. */
  readonly campaigns: number[] = [];
  /** appeals[0] of campaigns[0], appeals[1] of campaigns[1], appeals[2] of none. */
  readonly appeals: number[] = [];
  readonly appealCampaign = new Map<number, number | null>();
  readonly gifts: number[] = [];
  private step = 0;

  constructor(readonly tenant: Tenant) {}

  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown) {
    this.step += 1;
    return service.call<T>(method, `/api/v1${path}`, {
      key: this.tenant.key,
      body,
      headers: body === undefined ? {} : { 'Idempotency-Key': `step-${this.step}` },
    });
  }

  private async make(path: string, body: Record<string, unknown>): Promise<number> {
    const response = await this.call<{ id: number }>('POST', path, body);
    expect(response.status).toBe(201);
    return response.body.id;
  }

  async setUp(): Promise<void> {
    for (const name of ['P', 'R'])
      this.donors.push(
        await this.make('/donors', { role: 'Individual', first_name: name, last_name: 'Q' }),
      );
    for (const fund of ['F1', 'F2', 'F3'])
      this.funds.push(await this.make('/funds', { name: fund, code: fund }));
    this.campaigns.push(await this.make('/campaigns', { name: 'Top', code: 'TOP', goal: 500 }));
    for (const under of ['UNDER-1', 'UNDER-2'])
      this.campaigns.push(
        await this.make('/campaigns', { name: under, code: under, parent_id: this.campaigns[0] }),
      );
    this.campaigns.push(await this.make('/campaigns', { name: 'Apart', code: 'APART' }));
    const appealCampaigns = [this.campaigns[0]!, this.campaigns[1]!, null];
    for (const [index, campaignId] of appealCampaigns.entries()) {
      const id = await this.make('/appeals', {
        name: `Appeal ${index}`,
        code: `AP-${index}`,
        channel: 'mail',
        campaign_id: campaignId,
        ...(index === 0 ? { cost: 12.5 } : {}),
      });
      this.appeals.push(id);
      this.appealCampaign.set(id, campaignId);
    }
  }

  /** The codes as a body: an appeal of another campaign than the campaign sent is dropped. */
  private body(codes: Codes): { campaign_id: number | null; appeal_id: number | null } {
    const campaignId = codes.campaign === null ? null : this.campaigns[codes.campaign]!;
    let appealId = codes.appeal === null ? null : this.appeals[codes.appeal]!;
    const ofAppeal = appealId === null ? null : this.appealCampaign.get(appealId)!;
    if (campaignId !== null && ofAppeal !== null && ofAppeal !== campaignId) appealId = null;
    return { campaign_id: campaignId, appeal_id: appealId };
  }

  private pick(index: number): number | undefined {
    return this.gifts.length ? this.gifts[index % this.gifts.length] : undefined;
  }

  /** Creates the gift; answers its id. */
  private async createGift(operation: GiftOp): Promise<number> {
    const parts = operation.parts.slice(0, Math.min(operation.parts.length, operation.cents));
    const each = Math.floor(operation.cents / Math.max(1, parts.length));
    const designations = parts.map((part, index) => ({
      fund_id: this.funds[index]!,
      amount: (index === parts.length - 1 ? operation.cents - each * index : each) / 100,
      ...this.body(part),
    }));
    const response = await this.call<{ id: number }>('POST', '/gifts', {
      donor_id: this.donors[operation.donor]!,
      amount: operation.cents / 100,
      subject: 'Coded',
      gift_date: '2026-03-15',
      ...(operation.foreign ? { currency: 'EUR', exchange_rate: 1.234567 } : {}),
      ...this.body(operation.codes),
      designations,
    });
    expect(response.status).toBe(201);
    return response.body.id;
  }

  async apply(operation: Op): Promise<void> {
    switch (operation.kind) {
      case 'gift': {
        this.gifts.push(await this.createGift(operation));
        return;
      }
      case 'burst': {
        this.gifts.push(...(await Promise.all(operation.gifts.map((one) => this.createGift(one)))));
        return;
      }
      case 'recode': {
        const id = this.pick(operation.gift);
        if (id === undefined) return;
        const gift = await this.call<{ designations: { fund_id: number; amount: number }[] }>(
          'GET',
          `/gifts/${id}`,
        );
        const parts = gift.body.designations;
        const response = await this.call('PATCH', `/gifts/${id}`, {
          ...this.body(operation.codes),
          ...(parts.length && operation.part
            ? {
                designations: parts.map((part, index) => ({
                  fund_id: part.fund_id,
                  amount: part.amount,
                  ...(index === 0 ? this.body(operation.part!) : {}),
                })),
              }
            : {}),
        });
        expect(response.status).toBe(200);
        return;
      }
      case 'refund': {
        const id = this.pick(operation.gift);
        if (id === undefined) return;
        const gift = await this.call<{
          status: string;
          net_amount: number;
          designations: unknown[];
        }>('GET', `/gifts/${id}`);
        // A split gift's refund names its designations; one part or none may leave them out.
        if (gift.body.status === 'voided' || gift.body.designations.length > 1) return;
        const cents = Math.floor(centsOf(gift.body.net_amount) * operation.share);
        if (cents < 1) return;
        const response = await this.call('POST', `/gifts/${id}/refunds`, {
          amount: cents / 100,
          refund_date: '2026-04-01',
        });
        expect(response.status).toBe(201);
        return;
      }
      case 'void': {
        const id = this.pick(operation.gift);
        if (id === undefined) return;
        const response = await this.call('POST', `/gifts/${id}/void`, { reason: 'Error' });
        expect([200, 409]).toContain(response.status);
        return;
      }
      case 'delete': {
        const id = this.pick(operation.gift);
        if (id === undefined) return;
        const response = await this.call('DELETE', `/gifts/${id}`);
        expect([200, 409]).toContain(response.status);
        if (response.status === 200) this.gifts.splice(this.gifts.indexOf(id), 1);
        return;
      }
    }
  }

  /** The lines of the gifts, recomputed from the gifts as stored. */
  private async recomputed(): Promise<Line[]> {
    const gifts = (await service.db.any(sql.unsafe`
      SELECT id, donor_id, status, base_amount::text, base_amount_refunded::text, campaign_id,
             appeal_id, designations
      FROM gifts WHERE institution_id = ${this.tenant.institutionId} ORDER BY id`)) as readonly StoredGift[];
    const lines: Line[] = [];
    for (const gift of gifts) {
      const parts = gift.designations.length
        ? gift.designations.map((part) => {
            const own = part.campaign_id !== undefined || part.appeal_id !== undefined;
            return {
              fund_id: part.fund_id,
              campaign_id: own ? (part.campaign_id ?? null) : gift.campaign_id,
              appeal_id: own ? (part.appeal_id ?? null) : gift.appeal_id,
              net:
                part.base_amount === undefined
                  ? null
                  : centsOf(part.base_amount) - centsOf(part.base_amount_refunded ?? 0),
            };
          })
        : [
            {
              fund_id: null,
              campaign_id: gift.campaign_id,
              appeal_id: gift.appeal_id,
              net:
                gift.base_amount === null
                  ? null
                  : centsOf(gift.base_amount) - centsOf(gift.base_amount_refunded),
            },
          ];
      parts.forEach((part, index) => {
        const campaignId =
          part.campaign_id ??
          (part.appeal_id === null ? null : this.appealCampaign.get(part.appeal_id)!);
        if (campaignId === null && part.appeal_id === null) return;
        lines.push({
          gift_id: gift.id,
          line: index + 1,
          donor_id: gift.donor_id,
          fund_id: part.fund_id,
          campaign_id: campaignId,
          appeal_id: part.appeal_id,
          base_net: part.net === null ? null : text(part.net),
          counted: gift.status === 'posted' && part.net !== null,
        });
      });
    }
    return lines;
  }

  async check(): Promise<void> {
    const expected = await this.recomputed();
    const stored = await service.db.any(sql.unsafe`
      SELECT gift_id, line, donor_id, fund_id, campaign_id, appeal_id, base_net::text, counted
      FROM gift_lines WHERE institution_id = ${this.tenant.institutionId}
      ORDER BY gift_id, line`);
    expect(stored).toEqual(expected);
    const counted = expected.filter((line) => line.counted);
    const [top, ...rest] = this.campaigns;
    const trees = new Map<number, Set<number | null>>([
      [top!, new Set(this.campaigns.slice(0, 3))],
      ...rest.map((id): [number, Set<number | null>] => [id, new Set([id])]),
    ]);
    for (const [id, tree] of trees) {
      const lines = counted.filter((line) => tree.has(line.campaign_id));
      const raised = lines.reduce((sum, line) => sum + centsOf(line.base_net!), 0);
      const progress = await this.call<Progress>('GET', `/campaigns/${id}/progress`);
      expect(progress.status).toBe(200);
      const { body } = progress;
      const asCents = <K extends string>(
        rows: ({ raised: number } & Record<K, number | null>)[],
        key: K,
      ) => rows.map((row): [number | null, number] => [row[key], centsOf(row.raised)]);
      expect({
        raised: centsOf(body.raised),
        gift_count: body.gift_count,
        donor_count: body.donor_count,
        by_appeal: asCents(body.by_appeal, 'appeal_id'),
        by_fund: asCents(body.by_fund, 'fund_id'),
        // The top campaign's goal is 500: raised ÷ 500 × 100 in hundredths is cents ÷ 5, half up.
        percent_of_goal:
          body.percent_of_goal === null ? null : Math.round(body.percent_of_goal * 100),
      }).toEqual({
        raised,
        gift_count: distinctCount(lines.map((line) => line.gift_id)),
        donor_count: distinctCount(lines.map((line) => line.donor_id)),
        by_appeal: sumsBy(lines, (line) => line.appeal_id),
        by_fund: sumsBy(lines, (line) => line.fund_id),
        percent_of_goal: id === top ? Math.floor((2 * raised + 5) / 10) : null,
      });
      // Each list sums exactly to raised.
      for (const rows of [body.by_appeal, body.by_fund])
        expect(rows.reduce((sum, row) => sum + centsOf(row.raised), 0)).toBe(raised);
    }
    for (const [index, id] of this.appeals.entries()) {
      const lines = counted.filter((line) => line.appeal_id === id);
      const raised = lines.reduce((sum, line) => sum + centsOf(line.base_net!), 0);
      const results = await this.call<Results>('GET', `/appeals/${id}/results`);
      expect(results.status).toBe(200);
      const cost = index === 0 ? 1250 : null;
      expect({
        raised: centsOf(results.body.raised),
        gift_count: results.body.gift_count,
        donor_count: results.body.donor_count,
        cost: results.body.cost === null ? null : centsOf(results.body.cost),
        cost_per_unit_raised:
          results.body.cost_per_unit_raised === null
            ? null
            : Math.round(results.body.cost_per_unit_raised * 10_000),
      }).toEqual({
        raised,
        gift_count: distinctCount(lines.map((line) => line.gift_id)),
        donor_count: distinctCount(lines.map((line) => line.donor_id)),
        cost,
        // cost ÷ raised to 4 decimals, half up, in integers.
        cost_per_unit_raised:
          cost === null || raised <= 0
            ? null
            : Math.floor((2 * cost * 10_000 + raised) / (2 * raised)),
      });
    }
  }
}

let tenants = 0;

test('gift_lines, every campaign’s progress and every appeal’s results equal a plain recomputation from the gifts after every step', async () => {
  await checkAfterEveryStep(
    op,
    async () => new World(await service.createTenant(`Lines ${++tenants}`, 'USD')),
    { maxLength: 12, numRuns: 16 },
  );
}, 240_000);
