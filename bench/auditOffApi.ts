/**
 * bench:trust's baseline: the same API, built from the same code, without the audit log (no
 * config of the service turns it off). Run as its own process.
 */
import { startApi } from '../api/server.js';
import { loadConfigOrExit } from '../common/config.js';
import { createLogger } from '../common/logger.js';
import { runUntilStopped } from '../common/shutdown.js';

const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL);
await runUntilStopped(logger, 'api', () => startApi(config, logger, { audit: false }));
