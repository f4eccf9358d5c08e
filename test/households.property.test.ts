import fc from 'fast-check';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { checkAfterEveryStep, TenantSteps } from './helpers/stepWorld.js';
import { runs } from './helpers/propertyRuns.js';

/**
 * constituents.md §1, over any sequence of joins, leaves, gifts (some soft-credited to the
 * household), refunds and voids: after every step the household's `giving` is what a plain
 * recomputation from a model gives (the gifts of the household and of its current members, net
 * of refunds, voided ones left out; soft credits to the household only from gifts of others, each
 * credit × net / amount rounded down to the cent), its `member_ids` and `GET
 * /donors?household_id=` are the model's members, and each individual's own `giving` is its own
 * gifts whatever its household.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.close();
});

const PEOPLE = 3;
/** The donor of a gift: a person's index, or the household itself. */
const HOUSEHOLD = PEOPLE;
const DATES = ['2026-01-05', '2026-02-10', '2026-03-15', '2026-04-20'];

type Op =
  | { kind: 'join'; person: number }
  | { kind: 'leave'; person: number }
  | {
      kind: 'gift';
      donor: number;
      cents: number;
      date: number;
      /** A soft credit to the household of this share of the gift, when the donor is not it. */
      soft: number | null;
    }
  | { kind: 'refund'; gift: number; share: number }
  | { kind: 'void'; gift: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('join' as const), person: fc.nat(PEOPLE - 1) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('leave' as const), person: fc.nat(PEOPLE - 1) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('gift' as const),
      donor: fc.nat(PEOPLE),
      cents: fc.integer({ min: 3, max: 100_000 }),
      date: fc.nat(DATES.length - 1),
      soft: fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      gift: fc.nat(30),
      // Often the whole of what is left: a gift refunded in full still counts in gift_count and
      // the dates, and nowhere else.
      share: fc.oneof(fc.constant(1), fc.double({ min: 0.05, max: 1, noNaN: true })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('void' as const), gift: fc.nat(30) }) },
);

interface ModelGift {
  id: number;
  donor: number;
  cents: number;
  date: string;
  refunded: number;
  voided: boolean;
  /** Cents soft-credited to the household, or 0. */
  soft: number;
}

interface Giving {
  total_amount: number;
  gift_count: number;
  first_gift_date: string | null;
  last_gift_date: string | null;
  soft_credit_total: number;
  soft_credit_count: number;
}

const money = (cents: number) => cents / 100;
const cents = (value: number) => Math.round(value * 100);
const net = (gift: ModelGift) => gift.cents - gift.refunded;

/** The plain recomputation of giving over the gifts of `givers`, and soft credits to the household. */
function recompute(gifts: readonly ModelGift[], givers: ReadonlySet<number>, household: boolean) {
  const posted = gifts.filter((gift) => !gift.voided);
  const hard = posted.filter((gift) => givers.has(gift.donor));
  const dates = hard.map((gift) => gift.date).sort();
  const credited = household
    ? posted.filter((gift) => gift.soft > 0 && !givers.has(gift.donor))
    : [];
  return {
    total: hard.reduce((sum, gift) => sum + net(gift), 0),
    count: hard.length,
    first: dates[0] ?? null,
    last: dates.at(-1) ?? null,
    softTotal: credited.reduce(
      (sum, gift) => sum + Number((BigInt(gift.soft) * BigInt(net(gift))) / BigInt(gift.cents)),
      0,
    ),
    softCount: credited.length,
  };
}

class World extends TenantSteps {
  /** Person index → donor id; HOUSEHOLD → the household's. */
  readonly donors: number[] = [];
  readonly members = new Set<number>();
  readonly gifts: ModelGift[] = [];
  constructor(tenant: Tenant) {
    super(service, tenant);
  }

  async setUp(): Promise<void> {
    this.donors.push(...(await this.peopleAndHousehold(PEOPLE)));
  }

  async apply(operation: Op): Promise<void> {
    switch (operation.kind) {
      case 'join':
      case 'leave': {
        const joining = operation.kind === 'join';
        const response = await this.call('PATCH', `/donors/${this.donors[operation.person]}`, {
          household_id: joining ? this.donors[HOUSEHOLD] : null,
        });
        expect(response.status).toBe(200);
        if (joining) this.members.add(operation.person);
        else this.members.delete(operation.person);
        return;
      }
      case 'gift': {
        const soft =
          operation.soft === null || operation.donor === HOUSEHOLD
            ? 0
            : Math.max(1, Math.floor(operation.soft * operation.cents));
        const response = await this.call<{ id: number }>('POST', '/gifts', {
          donor_id: this.donors[operation.donor],
          amount: money(operation.cents),
          subject: 'Property gift',
          gift_date: DATES[operation.date],
          ...(soft
            ? {
                soft_credits: [
                  { donor_id: this.donors[HOUSEHOLD], amount: money(soft), reason: 'household' },
                ],
              }
            : {}),
        });
        expect(response.status).toBe(201);
        this.gifts.push({
          id: response.body.id,
          donor: operation.donor,
          cents: operation.cents,
          date: DATES[operation.date]!,
          refunded: 0,
          voided: false,
          soft,
        });
        return;
      }
      case 'refund': {
        const gift = this.gifts[operation.gift % Math.max(1, this.gifts.length)];
        if (!gift || gift.voided) return;
        const asked = Math.floor(net(gift) * operation.share);
        if (asked <= 0) return;
        const response = await this.call('POST', `/gifts/${gift.id}/refunds`, {
          amount: money(asked),
          refund_date: '2026-05-01',
        });
        expect(response.status).toBe(201);
        gift.refunded += asked;
        return;
      }
      case 'void': {
        const gift = this.gifts[operation.gift % Math.max(1, this.gifts.length)];
        if (!gift) return;
        const response = await this.call('POST', `/gifts/${gift.id}/void`, { reason: 'Error' });
        expect(response.status).toBe(gift.voided ? 409 : 200);
        gift.voided = true;
        return;
      }
    }
  }

  private async giving(index: number) {
    const donor = await this.call<{ giving: Giving; member_ids?: number[] }>(
      'GET',
      `/donors/${this.donors[index]}`,
    );
    expect(donor.status).toBe(200);
    const { giving } = donor.body;
    return {
      member_ids: donor.body.member_ids,
      figures: {
        total: cents(giving.total_amount),
        count: giving.gift_count,
        first: giving.first_gift_date,
        last: giving.last_gift_date,
        softTotal: cents(giving.soft_credit_total),
        softCount: giving.soft_credit_count,
      },
    };
  }

  async check(): Promise<void> {
    const memberIds = [...this.members].map((person) => this.donors[person]!).sort((a, b) => a - b);
    const household = await this.giving(HOUSEHOLD);
    expect(household).toEqual({
      member_ids: memberIds,
      figures: recompute(this.gifts, new Set([HOUSEHOLD, ...this.members]), true),
    });
    const listed = await this.call<{ data: { id: number }[] }>(
      'GET',
      `/donors?household_id=${this.donors[HOUSEHOLD]}&limit=100`,
    );
    expect(listed.body.data.map((donor) => donor.id).sort((a, b) => a - b)).toEqual(memberIds);
    for (let person = 0; person < PEOPLE; person += 1) {
      const own = await this.giving(person);
      const expected = recompute(this.gifts, new Set([person]), false);
      expect({ person, ...own }).toEqual({ person, member_ids: undefined, figures: expected });
    }
  }
}

test('a household’s giving equals a plain recomputation from its current members’ and its own gifts, each once, after every step of any sequence of joins, leaves, gifts, refunds and voids', async () => {
  await checkAfterEveryStep(op, async () => new World(await service.createTenant()), {
    maxLength: 12,
    numRuns: runs(40),
  });
}, 300_000);
