// The coding check a gift line will run (common/resources/campaigns/coding.ts), against the real
// database: its answers, its two queries whatever the number of lines, and the locks it holds.
import { sql, type DatabaseTransactionConnection } from 'slonik';
import type { CommandContext } from '../common/commands/command.js';
import {
  checkCoding,
  codingOf,
  effectiveCampaign,
  type CodedLine,
} from '../common/resources/campaigns/coding.js';
import { descendantCampaignIds } from '../common/resources/campaigns/queries.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import { waitFor } from './helpers/wait.js';

let service: TestService;
let other: Tenant;
let counter = 0;

const create = (path: string, body: Record<string, unknown>, key?: string) =>
  created<{ id: number }>(service.call('POST', `/api/v1/${path}`, { key, body }));
const campaign = async (body: Record<string, unknown> = {}, key?: string) =>
  (await create('campaigns', { name: `C ${++counter}`, code: `C-${counter}`, ...body }, key)).id;
const appeal = async (body: Record<string, unknown> = {}, key?: string) =>
  (
    await create(
      'appeals',
      { name: `A ${++counter}`, code: `A-${counter}`, channel: 'mail', ...body },
      key,
    )
  ).id;

/** The line of a designation at `index`, as a gift's rules would build it. */
const line = (index: number, campaignId: number | null, appealId: number | null): CodedLine => ({
  campaign_id: campaignId,
  appeal_id: appealId,
  campaignParam: `designations.${index}.campaign_id`,
  appealParam: `designations.${index}.appeal_id`,
});

/** Runs `work` with a write's context in a transaction of its own, as the worker does. */
function inWrite<T>(
  work: (ctx: CommandContext) => Promise<T>,
  options: { dryRun?: boolean } = {},
): Promise<T> {
  return service.db.transaction((db) => work(contextOf(db, options.dryRun ?? false)));
}

function contextOf(db: DatabaseTransactionConnection, dryRun: boolean): CommandContext {
  return {
    db,
    institution: { id: service.tenant.institutionId, name: 'Test', currency: 'USD' },
    dryRun,
    now: new Date().toISOString(),
  };
}

/** The context with its database calls counted: each call is one statement. */
function counted(ctx: CommandContext): { ctx: CommandContext; calls: () => number } {
  let calls = 0;
  const db = new Proxy(ctx.db, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { ctx: { ...ctx, db }, calls: () => calls };
}

const lockWaits = async () =>
  Number(
    await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`),
  );

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

describe('checkCoding', () => {
  test('no lines, and lines without codes: no error, no query', async () => {
    await inWrite(async (plain) => {
      const { ctx, calls } = counted(plain);
      expect(await checkCoding(ctx, [])).toEqual([]);
      expect(await codingOf(ctx, [line(0, null, null)])).toEqual({
        errors: [],
        campaignIds: [null],
      });
      expect(calls()).toBe(0);
    });
  });

  test('valid lines: a line with only an appeal takes the appeal’s campaign', async () => {
    const x = await campaign();
    const y = await campaign();
    const ofX = await appeal({ campaign_id: x });
    const loose = await appeal();
    const coding = await inWrite((ctx) =>
      codingOf(ctx, [
        line(0, x, null),
        line(1, null, ofX),
        line(2, x, ofX),
        line(3, y, loose),
        line(4, null, loose),
      ]),
    );
    expect(coding).toEqual({ errors: [], campaignIds: [x, x, x, y, null] });
  });

  test('unknown and another institution’s campaigns and appeals are reference_not_found, alike', async () => {
    const theirCampaign = await campaign({}, other.key);
    const theirAppeal = await appeal({}, other.key);
    const errors = await inWrite((ctx) =>
      checkCoding(ctx, [line(0, theirCampaign, theirAppeal), line(1, 999999999, 999999998)]),
    );
    expect(errors.map(({ param, code }) => ({ param, code }))).toEqual([
      { param: 'designations.0.appeal_id', code: 'reference_not_found' },
      { param: 'designations.1.appeal_id', code: 'reference_not_found' },
      { param: 'designations.0.campaign_id', code: 'reference_not_found' },
      { param: 'designations.1.campaign_id', code: 'reference_not_found' },
    ]);
    expect(errors[0]!.message).toBe(errors[1]!.message);
    expect(errors[2]!.message).toBe('does not name an existing campaign');
  });

  test('a closed campaign or appeal is reference_inactive; so is an appeal whose campaign is closed, on a line without a campaign', async () => {
    const closedCampaign = await campaign({ status: 'closed' });
    const open = await campaign();
    const closedAppeal = await appeal({ status: 'closed' });
    const openAppealOfClosed = await appeal({ campaign_id: open });
    // Its campaign closes after the appeal was made: the appeal stays active.
    await service.call('PATCH', `/api/v1/campaigns/${open}`, { body: { status: 'closed' } });
    const errors = await inWrite((ctx) =>
      checkCoding(ctx, [
        line(0, closedCampaign, null),
        line(1, null, closedAppeal),
        line(2, null, openAppealOfClosed),
      ]),
    );
    expect(errors).toEqual([
      {
        param: 'designations.1.appeal_id',
        code: 'reference_inactive',
        message: 'names an appeal that is closed',
      },
      {
        param: 'designations.0.campaign_id',
        code: 'reference_inactive',
        message: 'names a campaign that is closed',
      },
      {
        param: 'designations.2.appeal_id',
        code: 'reference_inactive',
        message: 'names an appeal whose campaign is closed',
      },
    ]);
  });

  test('an appeal of another campaign than the line’s is invalid_value on the appeal', async () => {
    const x = await campaign();
    const y = await campaign();
    const ofX = await appeal({ campaign_id: x });
    const coding = await inWrite((ctx) =>
      codingOf(ctx, [line(0, y, ofX), { ...line(1, x, ofX), appealParam: 'appeal_id' }]),
    );
    expect(coding.errors).toEqual([
      {
        param: 'designations.0.appeal_id',
        code: 'invalid_value',
        message: `names an appeal of campaign ${x}, not of campaign ${y}`,
      },
    ]);
    expect(coding.campaignIds).toEqual([y, x]);
  });

  test('two queries and the tree’s shared lock, whatever the number of lines', async () => {
    const x = await campaign();
    const appeals = [await appeal({ campaign_id: x }), await appeal(), await appeal()];
    const lines = Array.from({ length: 30 }, (_, index) =>
      line(index, index % 2 ? x : null, appeals[index % 3]!),
    );
    await inWrite(async (plain) => {
      const { ctx, calls } = counted(plain);
      expect(await checkCoding(ctx, lines)).toEqual([]);
      // The appeals, the campaigns, and the shared lock a move of the tree waits for.
      expect(calls()).toBe(3);
    });
  });

  test('a real write holds the rows it found: a campaign’s DELETE waits for it; a dry run holds nothing', async () => {
    const x = await campaign();
    const a = await appeal();
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let checked = () => {};
    const isChecked = new Promise<void>((resolve) => (checked = resolve));
    const write = inWrite(async (ctx) => {
      expect(await checkCoding(ctx, [line(0, x, a)])).toEqual([]);
      checked();
      await held;
    });
    await isChecked;
    const removals = [
      service.call('DELETE', `/api/v1/campaigns/${x}`),
      service.call('DELETE', `/api/v1/appeals/${a}`),
    ];
    await waitFor(async () => (await lockWaits()) === 2, 10_000, 'both deletes waiting');
    release();
    await write;
    expect((await Promise.all(removals)).map((r) => r.status)).toEqual([200, 200]);

    const y = await campaign();
    await inWrite(
      async (ctx) => {
        expect(await checkCoding(ctx, [line(0, y, null)])).toEqual([]);
        // Nothing held: the delete goes through while this transaction is still open.
        expect((await service.call('DELETE', `/api/v1/campaigns/${y}`)).status).toBe(200);
      },
      { dryRun: true },
    );
  });
});

describe('effectiveCampaign and descendantCampaignIds', () => {
  test('effectiveCampaign: the line’s own campaign, else its appeal’s, else none', () => {
    expect(effectiveCampaign({ campaign_id: 1 }, { campaign_id: 2 })).toBe(1);
    expect(effectiveCampaign({ campaign_id: null }, { campaign_id: 2 })).toBe(2);
    expect(effectiveCampaign({ campaign_id: null }, { campaign_id: null })).toBeNull();
    expect(effectiveCampaign({ campaign_id: null }, null)).toBeNull();
  });

  test('a campaign and every campaign below it, and nothing of another institution', async () => {
    const top = await campaign();
    const left = await campaign({ parent_id: top });
    const right = await campaign({ parent_id: top });
    const leaf = await campaign({ parent_id: left });
    await campaign(); // a bystander
    const theirs = await campaign({}, other.key);
    const institution = service.tenant.institutionId;
    expect(await descendantCampaignIds(service.db, institution, top)).toEqual([
      top,
      left,
      right,
      leaf,
    ]);
    expect(await descendantCampaignIds(service.db, institution, left)).toEqual([left, leaf]);
    expect(await descendantCampaignIds(service.db, institution, leaf)).toEqual([leaf]);
    expect(await descendantCampaignIds(service.db, institution, theirs)).toEqual([]);
    expect(await descendantCampaignIds(service.db, institution, 999999999)).toEqual([]);
  });
});
