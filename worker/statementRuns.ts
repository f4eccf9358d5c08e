import type { DatabasePool } from 'slonik';
import { isUnavailableError } from '../common/db/unavailable.js';
import {
  failStatementRun,
  RunStepFailed,
  stepStatementRun,
} from '../common/resources/givingStatementRuns/progress.js';
import type { Logger } from '../common/logger.js';

/** How often an idle worker looks for a run to step; the longest a queued run waits. */
const POLL_EVERY_MS = 250;

/**
 * Steps of one run that may fail in a row, on one worker, before it gives the run up (`failed`):
 * a run whose steps always fail (a bug, a row no step can read) would otherwise be retried for
 * ever and, first in line, hold up every run after it. PostgreSQL out of reach is not counted.
 */
const RUN_FAILURES_ALLOWED = 5;

/**
 * Giving statement runs on the workers. A run's progress lives in PostgreSQL only (its row's
 * `last_donor_id`), so nothing is queued in Redis for it: each worker steps whatever run is
 * waiting and not being stepped by another (stepStatementRun), step after step until none is.
 * A worker that dies mid-step loses only that step's uncommitted work, which the next step redoes.
 */
export function startStatementRuns(pool: DatabasePool, logger: Logger, batch: number) {
  let stepping: Promise<void> | null = null;
  let stopped = false;
  const failures = new Map<number, number>();
  /** Steps on while there is a run to step; stops at a failed step, until the next tick. */
  const work = async () => {
    while (!stopped) {
      let stepped;
      try {
        stepped = await stepStatementRun(pool, batch);
      } catch (error) {
        if (!(error instanceof RunStepFailed) || isUnavailableError(error.cause)) throw error;
        const { run } = error;
        const failed = (failures.get(run.id) ?? 0) + 1;
        failures.set(run.id, failed);
        logger.error(
          { err: error.cause, runId: run.id, failed },
          'giving statement run step failed',
        );
        if (failed < RUN_FAILURES_ALLOWED) return;
        failures.delete(run.id);
        await failStatementRun(pool, run);
        logger.error({ runId: run.id }, 'giving statement run given up: failed');
        continue;
      }
      if (!stepped) return;
      failures.delete(stepped.id);
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
