import type { DatabasePool } from 'slonik';
import { stepStatementRun } from '../common/resources/givingStatementRuns/progress.js';
import type { Logger } from '../common/logger.js';

/** How often an idle worker looks for a run to step; the longest a queued run waits. */
const POLL_EVERY_MS = 250;

/**
 * Giving statement runs on the workers. A run's progress lives in PostgreSQL only (its row's
 * `last_donor_id`), so nothing is queued in Redis for it: each worker steps whatever run is
 * waiting and not being stepped by another (stepStatementRun), step after step until none is.
 * A worker that dies mid-step loses only that step's uncommitted work, which the next step redoes.
 */
export function startStatementRuns(pool: DatabasePool, logger: Logger, batch: number) {
  let stepping: Promise<void> | null = null;
  let stopped = false;
  const work = async () => {
    while (!stopped && (await stepStatementRun(pool, batch))) {
      // Step on while there is a run to step.
    }
  };
  const timer = setInterval(() => {
    if (stepping || stopped) return;
    stepping = work()
      .catch((error: unknown) => logger.error({ err: error }, 'giving statement run step failed'))
      .finally(() => (stepping = null));
  }, POLL_EVERY_MS);
  timer.unref();
  return {
    async close() {
      stopped = true;
      clearInterval(timer);
      await stepping;
    },
  };
}
