/** The `worker` process: commits queued writes to Postgres. Run as many as needed. */
import { loadConfigOrExit } from '../common/config.js';
import { createLogger } from '../common/logger.js';
import { runUntilStopped } from '../common/shutdown.js';
import { checkDependenciesOrExit, startOrExit } from '../common/startupChecks.js';
import { startWorker } from './worker.js';

const config = loadConfigOrExit();
await checkDependenciesOrExit(config);
const logger = createLogger(config.LOG_LEVEL);
await runUntilStopped(logger, 'worker', () => startOrExit(() => startWorker(config, logger)));
