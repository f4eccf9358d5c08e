/**
 * CPU time by process, read from /proc (Linux): where a benchmark phase spends the machine.
 * Elsewhere every reading is null and the benchmark prints no breakdown.
 */
import { readFile } from 'node:fs/promises';

/** Kernel clock ticks per second for /proc's utime and stime (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User plus system CPU seconds a process has used, or null if it cannot be read. */
export async function cpuSecondsOf(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the fields after its closing paren do not.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** CPU seconds so far of each process read, by pid, with the group it was read for. */
export interface CpuReading {
  groups: string[];
  processes: Map<number, { group: string; seconds: number }>;
}

/** Reads every process of every group; null where /proc is not there. */
export async function readCpu(groups: Record<string, number[]>): Promise<CpuReading | null> {
  if ((await cpuSecondsOf(process.pid)) === null) return null;
  const reading: CpuReading = { groups: Object.keys(groups), processes: new Map() };
  for (const [group, pids] of Object.entries(groups)) {
    for (const pid of pids) {
      const seconds = await cpuSecondsOf(pid);
      if (seconds !== null) reading.processes.set(pid, { group, seconds });
    }
  }
  return reading;
}

/**
 * Milliseconds of CPU per request for each group between two readings. A process first seen
 * in the second reading (a database connection opened meanwhile) counts from zero.
 */
export function cpuPerRequest(
  before: CpuReading,
  after: CpuReading,
  requests: number,
): Record<string, number> {
  const perRequest: Record<string, number> = Object.fromEntries(
    after.groups.map((group) => [group, 0]),
  );
  for (const [pid, { group, seconds }] of after.processes) {
    const used = seconds - (before.processes.get(pid)?.seconds ?? 0);
    perRequest[group] = (perRequest[group] ?? 0) + (requests > 0 ? (used * 1000) / requests : 0);
  }
  return perRequest;
}
