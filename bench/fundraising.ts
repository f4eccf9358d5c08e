/**
 * `npm run bench:fundraising`: what coding a gift costs (fundraising.md §2–4).
 *
 * 1. Gift creates in a foreign currency (its rate looked up by date), coded to a campaign and an
 *    appeal, honouring someone with a person to notify, next to plain gift creates, through the
 *    same API and worker processes in the same run, after an unmeasured warm-up, in halves
 *    alternated (the second round in reverse order) (target: at least 0.85x).
 * 2. `GET /campaigns/{id}/progress` of a campaign with 3 child campaigns, 10 appeals and 200,000
 *    coded gift lines (target: p50 under 50 ms), and `GET /appeals/{id}/results` of one appeal.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (default 50).
 */
import { sql } from 'slonik';
import { z } from 'zod';
import { createInstitution } from '../common/institutions.js';
import { rebuildCampaignTreeCounts } from '../common/resources/campaigns/lines.js';
import { freePort, until } from './processes.js';
import { combined, printPhases, runPhase, type Phase } from './phases.js';
import { insertBenchRecords, withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const LINES = Number(process.env.BENCH_LINES ?? 200_000);

async function main(): Promise<void> {
  await withBenchStack('fundraising', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const { donorIds, fundIds } = await insertBenchRecords(pool, institution.id, {
      donors: 2,
      funds: 3,
    });
    const [donor, honoree] = donorIds as [number, number];

    const port = await freePort();
    spawn('api/main.js', { PORT: String(port) });
    spawn('worker/main.js');
    const base = `http://127.0.0.1:${port}/api/v1`;
    const auth = { 'X-Service-API-Key': apiKey.key };
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const plain = {
      donor_id: donor,
      amount: 300,
      subject: 'Benchmark gift',
      gift_date: '2026-11-21',
      fund_id: fundIds[0]!,
    };
    await until('the API and a worker', async () => (await post('/gifts', plain)).status === 201);
    for (const [effective_on, rate] of [
      ['2026-01-01', 1.0812],
      ['2026-06-01', 1.0934],
      ['2026-11-01', 1.0571],
    ] as const)
      await post('/exchange-rates', { currency: 'EUR', rate, effective_on });
    const created = async (path: string, body: unknown) => {
      const response = await post(path, body);
      if (response.status !== 201) throw new Error(`${path}: ${await response.text()}`);
      return ((await response.json()) as { id: number }).id;
    };
    const parent = await created('/campaigns', {
      name: 'Centennial',
      code: 'C100',
      goal: 50_000_000,
    });
    const children = [];
    for (const n of [1, 2, 3])
      children.push(
        await created('/campaigns', {
          name: `Centennial ${n}`,
          code: `C100-${n}`,
          parent_id: parent,
        }),
      );
    const tree = [parent, ...children];
    const appeals = [];
    for (let n = 0; n < 10; n++)
      appeals.push(
        await created('/appeals', {
          name: `Appeal ${n}`,
          code: `A${n}`,
          channel: 'mail',
          campaign_id: tree[n % tree.length],
          cost: 1000,
        }),
      );
    const coded = {
      ...plain,
      campaign_id: tree[0],
      appeal_id: appeals[0],
      currency: 'EUR',
      tribute: {
        type: 'in_memory_of',
        honoree_name: 'Margaret Hamilton',
        honoree_donor_id: honoree,
        notify: { name: 'Lauren Hamilton', email: 'lauren@example.org' },
        message: 'In loving memory',
      },
    };
    const gifts = {
      url: `${base}/gifts`,
      method: 'POST' as const,
      headers: auth,
      keyed: true,
      connections,
      seconds,
    };
    const bodies = [
      JSON.stringify(plain),
      JSON.stringify(coded),
      // The same without the codes: what the codes themselves cost.
      JSON.stringify({ ...coded, campaign_id: undefined, appeal_id: undefined }),
    ];
    // Unmeasured: the processes' first seconds (JIT, pools) would be charged to the first phase.
    await runPhase('warm-up', { ...gifts, seconds: Math.min(3, seconds), body: bodies[0] });
    // Alternated, two halves each, the second round in the other order: on a shared machine the
    // load drifts within a run, and one phase after the other would charge the drift (and what
    // the phase before left behind) to the comparison.
    const half = { ...gifts, seconds: Math.max(1, seconds / 2) };
    const rounds: Phase[][] = [[], [], []];
    for (const order of [
      [0, 1, 2],
      [2, 1, 0],
    ])
      for (const n of order)
        rounds[n]!.push(await runPhase(`phase ${n}`, { ...half, body: bodies[n] }));
    const phases: Phase[] = [
      combined('plain gift create', rounds[0]!),
      combined('EUR (rate by date), campaign, appeal, tribute', rounds[1]!),
      combined('EUR (rate by date), tribute, no codes', rounds[2]!),
    ];

    // 200,000 coded lines: one designation each, over the tree, the appeals and 3 funds, each
    // gift coded to its appeal's campaign, as the service would have written them.
    const funds = sql.array(fundIds, 'int8');
    const donors = (await insertBenchRecords(pool, institution.id, { donors: 5000, funds: 0 }))
      .donorIds;
    // In batches, each within the pool's statement timeout: the gifts in the base currency with
    // their base amounts, and the line writeGiftLines writes for each (one designation, the
    // gift's codes).
    for (let from = 0; from < LINES; from += 10_000)
      await pool.query(sql.unsafe`
        WITH seeded AS (
          INSERT INTO gifts (institution_id, donor_id, amount, currency, exchange_rate,
                             base_amount, subject, gift_date, type, designations, fund_ids,
                             campaign_id, appeal_id, campaign_ids, appeal_ids)
          SELECT ${institution.id}, (${sql.array(donors, 'int8')})[1 + n % ${donors.length}], 50,
                 'USD', 1, 50, 'Seeded', DATE '2026-01-01' + (n % 300), 'cash',
                 jsonb_build_array(jsonb_build_object('fund_id', (${funds})[1 + n % 3],
                   'amount', 50, 'amount_refunded', 0, 'base_amount', 50,
                   'base_amount_refunded', 0)),
                 ARRAY[(${funds})[1 + n % 3]], a.campaign_id, a.id, ARRAY[a.campaign_id],
                 ARRAY[a.id]
          FROM generate_series(${from + 1}::int, ${Math.min(from + 10_000, LINES)}::int) AS n
          JOIN appeals a ON a.institution_id = ${institution.id}
            AND a.id = (${sql.array(appeals, 'int8')})[1 + n % 10]
          RETURNING institution_id, id, donor_id, fund_ids, campaign_id, appeal_id, base_amount)
        INSERT INTO gift_lines (institution_id, gift_id, line, donor_id, fund_id, campaign_id,
                                appeal_id, base_net, counted)
        SELECT institution_id, id, 1, donor_id, fund_ids[1], campaign_id, appeal_id,
               base_amount, true
        FROM seeded`);
    // The totals writeGiftLines keeps, for the lines written directly.
    await pool.query(sql.unsafe`
      INSERT INTO campaign_line_totals (institution_id, campaign_id, appeal_id, fund_id, raised,
                                        lines)
      SELECT institution_id, campaign_id, appeal_id, fund_id, sum(base_net), count(*)
      FROM gift_lines WHERE institution_id = ${institution.id} AND counted
        AND gift_id IN (SELECT id FROM gifts WHERE institution_id = ${institution.id}
                          AND subject = 'Seeded')
      GROUP BY institution_id, campaign_id, appeal_id, fund_id
      ON CONFLICT (institution_id, campaign_id, appeal_id, fund_id) DO UPDATE
      SET raised = campaign_line_totals.raised + excluded.raised,
          lines = campaign_line_totals.lines + excluded.lines`);
    await pool.transaction((db) => rebuildCampaignTreeCounts(db, institution.id));
    await pool.query(sql.unsafe`
      ANALYZE gifts, gift_lines, campaign_line_totals, campaign_tree_donors`);
    const lines = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM gift_lines WHERE institution_id = ${institution.id}`);
    const reads = { headers: auth, connections: 4, seconds };
    phases.push(
      await runPhase(`GET /campaigns/{id}/progress: 3 children, 10 appeals, ${lines} lines`, {
        url: `${base}/campaigns/${parent}/progress`,
        ...reads,
      }),
      await runPhase('GET /appeals/{id}/results', {
        url: `${base}/appeals/${appeals[1]}/results`,
        ...reads,
      }),
    );
    const ratio = phases[1]!.perSecond / phases[0]!.perSecond;
    printPhases(
      `Fundraising benchmark (${seconds} s per phase, ${connections} connections)`,
      phases,
    );
    console.log(
      `\ncoded create / plain create: ${ratio.toFixed(2)}x (target ≥ 0.85x: ${ratio >= 0.85 ? 'met' : 'missed'})`,
    );
    const progress = phases[3]!;
    console.log(
      `campaign progress p50: ${progress.p50} ms (target < 50 ms: ${progress.p50 < 50 ? 'met' : 'missed'})`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
