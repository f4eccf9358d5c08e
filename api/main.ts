/** The `web` process: the HTTP API. */
import { loadConfigOrExit } from '../common/config.js';
import { createLogger } from '../common/logger.js';
import { runUntilStopped } from '../common/shutdown.js';
import { checkDependenciesOrExit, startOrExit } from '../common/startupChecks.js';
import { startApi } from './server.js';

const config = loadConfigOrExit();
await checkDependenciesOrExit(config);
const logger = createLogger(config.LOG_LEVEL);
await runUntilStopped(logger, 'api', () => startOrExit(() => startApi(config, logger)));
