/**
 * One load phase of a benchmark against the running service (autocannon), and the table the
 * benchmarks print their phases in.
 */
import autocannon from 'autocannon';

export interface Phase {
  name: string;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface PhaseLoad {
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Each request gets an Idempotency-Key of its own (a write that must not replay). */
  keyed?: boolean;
  /** The body of the n-th keyed request, where one body for all would not do (a full household). */
  bodyOf?: (n: number) => string;
  connections: number;
  seconds: number;
}

/** Halves of one phase as one: mean rate and median, worst p99, every error. */
export const combined = (name: string, halves: readonly Phase[]): Phase => ({
  name,
  perSecond: halves.reduce((sum, half) => sum + half.perSecond, 0) / halves.length,
  p50: Math.round(halves.reduce((sum, half) => sum + half.p50, 0) / halves.length),
  p99: Math.max(...halves.map((half) => half.p99)),
  errors: halves.reduce((sum, half) => sum + half.errors, 0),
});

export async function runPhase(name: string, load: PhaseLoad): Promise<Phase> {
  let issued = 0;
  const result = await autocannon({
    url: load.url,
    connections: load.connections,
    duration: load.seconds,
    method: load.method ?? 'GET',
    headers: { 'Content-Type': 'application/json', ...load.headers },
    ...(load.body ? { body: load.body } : {}),
    ...(load.keyed
      ? {
          requests: [
            {
              setupRequest: (request: autocannon.Request) => {
                const n = issued++;
                return {
                  ...request,
                  headers: { ...request.headers, 'Idempotency-Key': `${name}-${n}` },
                  ...(load.bodyOf ? { body: load.bodyOf(n) } : {}),
                };
              },
            },
          ],
        }
      : {}),
  });
  return {
    name,
    perSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

/** The phases as a table: requests per second, latencies and errors. */
export function printPhases(title: string, phases: readonly Phase[]): void {
  const width = Math.max(5, ...phases.map((phase) => phase.name.length)) + 2;
  console.log(`\n${title}\n`);
  console.log(
    'phase'.padEnd(width),
    'req/s'.padStart(8),
    'p50 ms'.padStart(8),
    'p99 ms'.padStart(8),
    'errors'.padStart(7),
  );
  for (const phase of phases)
    console.log(
      phase.name.padEnd(width),
      phase.perSecond.toFixed(0).padStart(8),
      String(phase.p50).padStart(8),
      String(phase.p99).padStart(8),
      String(phase.errors).padStart(7),
    );
}
