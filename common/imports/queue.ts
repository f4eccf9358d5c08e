import { Queue, type ConnectionOptions } from 'bullmq';
import { queueLocation } from '../queueShards.js';

/** Import chunks have a queue of their own, so a large file never holds up a single write. */
export const IMPORT_QUEUE = 'imports';

/** One queue, in one cluster slot (`<QUEUE_PREFIX>:{imports}`). */
export const createImportQueue = (connection: ConnectionOptions, queuePrefix: string): Queue => {
  const { name, prefix } = queueLocation(queuePrefix, IMPORT_QUEUE);
  return new Queue(name, { connection, prefix });
};
