/**
 * `npm run dev`: the API and one worker in a single process, for development and demos.
 * Production runs them as separate processes (see the Procfile).
 */
import { startApi } from '../api/server.js';
import { loadConfigOrExit } from '../common/config.js';
import { createLogger } from '../common/logger.js';
import { runUntilStopped } from '../common/shutdown.js';
import { startWorker } from '../worker/worker.js';

const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL);
await runUntilStopped(logger, 'service', async () => {
  const worker = await startWorker(config, logger);
  const api = await startApi(config, logger);
  return {
    async close() {
      await api.close();
      await worker.close();
    },
  };
});
