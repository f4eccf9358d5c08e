/**
 * `npm run bench:fundraising`: what coding a gift costs (fundraising.md §2–4).
 *
 * Gift creates in a foreign currency (its rate looked up by date), coded to a campaign and an
 * appeal, honouring someone with a person to notify, next to plain gift creates, through the
 * same API and worker processes in the same run (target: at least 0.85x).
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (default 50).
 */
import { createInstitution } from '../common/institutions.js';
import { freePort, until } from './processes.js';
import { printPhases, runPhase } from './phases.js';
import { insertBenchRecords, withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

async function main(): Promise<void> {
  await withBenchStack('fundraising', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const { donorIds, fundIds } = await insertBenchRecords(pool, institution.id, {
      donors: 2,
      funds: 1,
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
    const coded = {
      ...plain,
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
    const phases = [
      await runPhase('plain gift create', { ...gifts, body: JSON.stringify(plain) }),
      await runPhase('EUR (rate by date) + tribute', { ...gifts, body: JSON.stringify(coded) }),
    ];
    const ratio = phases[1]!.perSecond / phases[0]!.perSecond;
    printPhases(
      `Fundraising benchmark (${seconds} s per phase, ${connections} connections)`,
      phases,
    );
    console.log(
      `\ncoded create / plain create: ${ratio.toFixed(2)}x (target ≥ 0.85x: ${ratio >= 0.85 ? 'met' : 'missed'})`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
