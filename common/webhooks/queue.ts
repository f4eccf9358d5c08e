import { Queue, type ConnectionOptions } from 'bullmq';
import { queueLocation, type QueueLocation } from '../queueShards.js';
import type { DeliveryRef } from './dispatch.js';
import { retrySchedule } from './policy.js';

/** Deliveries have a queue of their own, so a slow receiver never holds up a write. */
export const WEBHOOK_QUEUE = 'webhooks';
export const DELIVER_JOB = 'deliver';

export type DeliveryQueue = Queue<DeliveryRef, void, typeof DELIVER_JOB>;

/** One queue, in one cluster slot (`<QUEUE_PREFIX>:{webhooks}`). */
export const deliveryQueueLocation = (queuePrefix: string): QueueLocation =>
  queueLocation(queuePrefix, WEBHOOK_QUEUE);

export const createDeliveryQueue = (
  connection: ConnectionOptions,
  queuePrefix: string,
): DeliveryQueue => {
  const { name, prefix } = deliveryQueueLocation(queuePrefix);
  return new Queue(name, { connection, prefix });
};

export const jobIdOf = (delivery: DeliveryRef) =>
  `d-${delivery.institutionId}-${delivery.deliveryId}`;

const retention = {
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/**
 * A job per new delivery, retried on the schedule. A delivery's job id is its own, so queueing
 * one twice (a dispatch run again, an orphan swept) sends it once.
 */
export async function enqueueDeliveries(
  queue: DeliveryQueue,
  deliveries: readonly DeliveryRef[],
): Promise<void> {
  if (!deliveries.length) return;
  await queue.addBulk(
    deliveries.map((delivery) => ({
      name: DELIVER_JOB,
      data: delivery,
      opts: {
        jobId: jobIdOf(delivery),
        attempts: retrySchedule().length + 1,
        backoff: { type: 'webhook' },
        ...retention,
      },
    })),
  );
}

/**
 * One attempt now, asked for through the API: a job of its own, named after the request's
 * number, so that queueing the same request twice sends once. It is marked `manual`: its
 * outcome never ends the delivery's schedule (recordAttempts), whose retries keep their job and
 * find the delivery settled once it is delivered.
 */
export async function enqueueManualRetries(
  queue: DeliveryQueue,
  retries: readonly (DeliveryRef & { request: number })[],
): Promise<void> {
  if (!retries.length) return;
  await queue.addBulk(
    retries.map(({ request, ...delivery }) => ({
      name: DELIVER_JOB,
      data: { ...delivery, manual: true },
      opts: { jobId: `${jobIdOf(delivery)}-retry-${request}`, attempts: 1, ...retention },
    })),
  );
}
