/** The `web` process: the HTTP API. */
import { loadConfigOrExit } from '../common/config.js';
import { createLogger } from '../common/logger.js';
import { onShutdown } from '../common/shutdown.js';
import { checkDependenciesOrExit, startOrExit } from '../common/startupChecks.js';
import { startApi } from './server.js';

const config = loadConfigOrExit();
await checkDependenciesOrExit(config);
const logger = createLogger(config.LOG_LEVEL);
// Heard before the api is ready: a stop that comes while it starts waits for the start, then
// closes it, rather than cutting off what it has begun by the signal's default.
const api = startOrExit(() => startApi(config, logger));
onShutdown(logger, 'api', async () => (await api).close());
await api;
