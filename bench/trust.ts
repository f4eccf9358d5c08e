/**
 * `npm run bench:trust`: what the audit log costs (trust.md §3: a write at least 0.9x, the first
 * page of a list at least 0.95x). Two API processes of the same build on one database and one
 * worker, side by side in one run: one as the service runs, one without the audit log
 * (bench/auditOffApi.ts). Both check permissions (a map lookup per request); phases alternate,
 * two halves each, since the load of a shared machine drifts within a run.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (default 50).
 */
import { createInstitution } from '../common/institutions.js';
import { printPhases, runPhase, type Phase, type PhaseLoad } from './phases.js';
import { freePort, until } from './processes.js';
import { withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

const combined = (name: string, halves: readonly Phase[]): Phase => ({
  name,
  perSecond: halves.reduce((sum, half) => sum + half.perSecond, 0) / halves.length,
  p50: Math.round(halves.reduce((sum, half) => sum + half.p50, 0) / halves.length),
  p99: Math.max(...halves.map((half) => half.p99)),
  errors: halves.reduce((sum, half) => sum + half.errors, 0),
});

async function main(): Promise<void> {
  await withBenchStack('trust', async ({ pool, spawn }) => {
    const { apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const [audited, bare] = [await freePort(), await freePort()];
    spawn('api/main.js', { PORT: String(audited) });
    spawn('bench/auditOffApi.js', { PORT: String(bare) });
    spawn('worker/main.js');
    const auth = { 'X-Service-API-Key': apiKey.key };
    const base = (port: number) => `http://127.0.0.1:${port}/api/v1`;
    for (const port of [audited, bare])
      await until(`the API on ${port} and a worker`, async () => {
        const response = await fetch(`${base(port)}/tags?dry_run=true`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'warm-up' }),
        });
        return response.status === 201;
      });

    let issued = 0;
    const write = (port: number): PhaseLoad => ({
      url: `${base(port)}/donors`,
      method: 'POST',
      headers: auth,
      keyed: true,
      connections,
      seconds: Math.max(1, seconds / 4),
      body: '{}',
      bodyOf: () =>
        JSON.stringify({
          role: 'Individual',
          first_name: 'Ada',
          last_name: `Lovelace ${issued}`,
          email: `ada.${issued++}@example.org`,
        }),
    });
    const read = (port: number): PhaseLoad => ({
      url: `${base(port)}/donors?limit=25`,
      headers: auth,
      connections: 8,
      seconds: Math.max(1, seconds / 4),
    });
    await runPhase('warm-up', { ...write(audited), seconds: Math.min(3, seconds) });
    await runPhase('warm-up', { ...write(bare), seconds: Math.min(3, seconds) });
    const halves: Record<string, Phase[]> = { wOff: [], wOn: [], rOff: [], rOn: [] };
    // Each round in the other order: the donors table grows as the run goes on, and the machine's
    // load drifts, so neither side always goes first. The reads come after all the writes, each
    // after a read of its own: right after a write phase, the writes' after-effects (autovacuum,
    // the audit log's last flush) would land on whichever side read first.
    const sides = [
      { on: false, port: bare },
      { on: true, port: audited },
    ];
    const inOrder = (round: number) => (round % 2 === 0 ? sides : [...sides].reverse());
    for (let round = 0; round < 2; round++)
      for (const { on, port } of inOrder(round)) {
        const label = on ? 'audit' : 'no audit';
        halves[on ? 'wOn' : 'wOff']!.push(await runPhase(`writes, ${label} ${round}`, write(port)));
      }
    for (let round = 0; round < 4; round++)
      for (const { on, port } of inOrder(round)) {
        const label = on ? 'audit' : 'no audit';
        halves[on ? 'rOn' : 'rOff']!.push(await runPhase(`reads, ${label} ${round}`, read(port)));
      }
    const phases = [
      combined('POST /donors, without the audit log', halves.wOff!),
      combined('POST /donors, with the audit log', halves.wOn!),
      combined('GET /donors first page, without the audit log', halves.rOff!),
      combined('GET /donors first page, with the audit log', halves.rOn!),
    ];
    printPhases(
      `Trust benchmark (${seconds} s per phase, ${connections} write connections)`,
      phases,
    );
    const writes = phases[1]!.perSecond / phases[0]!.perSecond;
    const reads = phases[3]!.perSecond / phases[2]!.perSecond;
    console.log(
      `writes with the audit log / without: ${writes.toFixed(2)}x (target ≥ 0.9x: ${writes >= 0.9 ? 'met' : 'missed'})`,
    );
    console.log(
      `first list page with / without: ${reads.toFixed(2)}x (target ≥ 0.95x: ${reads >= 0.95 ? 'met' : 'missed'})`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
