import type pg from 'pg';
import type { SqlStep } from './sqlLoad.js';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  'Index Cond'?: string;
  Filter?: string;
  /** With ANALYZE: 0 for a node that never ran (a part of the statement gated off). */
  'Actual Loops'?: number;
  /** With ANALYZE: rows the node returned per loop. */
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

export interface Plan {
  nodes: PlanNode[];
  /** milliseconds, when analysed */
  executionTime?: number;
}

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}

export async function explain(pool: pg.Pool, step: SqlStep, analyse = false): Promise<Plan> {
  const options = analyse ? 'ANALYZE, FORMAT JSON' : 'FORMAT JSON';
  const result = await pool.query<{
    'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time'?: number }];
  }>(`EXPLAIN (${options}) ${step.text}`, [...step.values]);
  const [top] = result.rows[0]!['QUERY PLAN'];
  return { nodes: flatten(top.Plan), executionTime: top['Execution Time'] };
}

/** "Limit > Index Scan Backward gifts_pkey": the plan in one line. */
export function describePlan(plan: Plan): string {
  return plan.nodes
    .filter((node) => node['Actual Loops'] !== 0)
    .map((node) => {
      const direction = node['Scan Direction'] === 'Backward' ? ' Backward' : '';
      const index = node['Index Name'] ? ` ${node['Index Name']}` : '';
      return `${node['Node Type']}${direction}${index}`;
    })
    .join(' > ');
}

export interface KeysetVerdict {
  ok: boolean;
  index: string | null;
  problems: string[];
}

/**
 * A keyset page is cheap at any depth, whatever else the table holds, when gifts are read by
 * one backward scan of the (institution_id, id) index with the position in the index condition:
 * no sort, no sequential or bitmap scan. A scan of the id-only primary key filtered on
 * institution_id looks as cheap on a one-institution table, but steps over every newer gift of
 * every other institution one by one.
 */
export function checkKeysetPlan(
  plan: Plan,
  expectedIndex: string,
  positioned: boolean,
): KeysetVerdict {
  const problems: string[] = [];
  for (const node of plan.nodes) {
    if (/Sort|Seq Scan|Bitmap/.test(node['Node Type']))
      problems.push(`a ${node['Node Type']} node`);
  }
  const scan = plan.nodes.find(
    (node) => node['Relation Name'] === 'gifts' && /Index (Only )?Scan/.test(node['Node Type']),
  );
  if (!scan) problems.push('no index scan on gifts');
  else {
    if (scan['Scan Direction'] !== 'Backward') problems.push('the index is not read backward');
    if (scan['Index Name'] !== expectedIndex) {
      problems.push(
        `reads ${scan['Index Name']} (filtering on institution_id) instead of ${expectedIndex}: ` +
          "other institutions' newer gifts would be read and thrown away " +
          '(try BENCH_NEIGHBOUR_GIFTS=250000)',
      );
    }
    if (positioned && !/\bid < /.test(scan['Index Cond'] ?? '')) {
      problems.push('the cursor position is not in the index condition');
    }
  }
  return { ok: problems.length === 0, index: scan?.['Index Name'] ?? null, problems };
}
