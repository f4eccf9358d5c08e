/** The `worker` process: commits queued writes to Postgres. Run as many as needed. */
import { loadConfigOrExit } from '../common/config.js';
import { createLogger } from '../common/logger.js';
import { onShutdown } from '../common/shutdown.js';
import { checkDependenciesOrExit, startOrExit } from '../common/startupChecks.js';
import { startWorker } from './worker.js';

const config = loadConfigOrExit();
await checkDependenciesOrExit(config);
const logger = createLogger(config.LOG_LEVEL);
// Heard before the worker is ready: a stop that comes while it starts waits for the start, then
// closes it, rather than cutting off what it has begun by the signal's default.
const worker = startOrExit(() => startWorker(config, logger));
onShutdown(logger, 'worker', async () => (await worker).close());
await worker;
