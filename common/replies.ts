import { randomUUID } from 'node:crypto';
import type { WriteResult } from './commands/runWrite.js';
import type { Redis } from './redis.js';

/**
 * A write's outcome goes to the API process that waits for it, and to no other. Each API process
 * subscribes to a channel of its own; a job names that channel (`replyTo`), and the worker
 * publishes the outcome there. No API process reads the outcomes of writes it does not wait for,
 * so adding API processes adds no cost to anyone's writes.
 *
 * Delivery is at most once: a reply to a process that is gone, or whose subscription was down at
 * that moment, is lost. Its waiter then answers 504, and the retry with the same key replays the
 * write (its receipt and done marker say it happened), exactly as after any other 504.
 */
export type Reply = { jobId: string; result: WriteResult } | { jobId: string; failed: string };

export interface ResultWatch {
  /** The job's outcome, or 'timeout' after `ttlMs`; rejects if the job failed. */
  result: Promise<WriteResult | 'timeout'>;
  /** Stops waiting (the job was never queued). */
  cancel(): void;
}

/** Sends a job's outcome to its waiter; never fails the job (a lost reply ends in a 504). */
export function sendReply(redis: Redis, channel: string, reply: Reply): void {
  void redis.publish(channel, JSON.stringify(reply)).catch(() => {});
}

/** One API process's replies: its channel, and the requests waiting on it. */
export class ReplyInbox {
  readonly channel: string;
  private readonly waiters = new Map<string, (reply: Reply) => void>();

  /** `subscriber` is a connection of its own: a subscribed connection takes no other command. */
  constructor(
    private readonly subscriber: Redis,
    prefix: string,
  ) {
    this.channel = `${prefix}:replies:${randomUUID()}`;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const reply = JSON.parse(message) as Reply;
      this.waiters.get(reply.jobId)?.(reply);
    });
  }

  /** Subscribes; the connection resubscribes by itself after a reconnect. */
  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
  }

  /** Waits for one job's outcome. Call it before adding the job, so no reply can come first. */
  watch(jobId: string, ttlMs: number): ResultWatch {
    let settle: (done: () => void) => void = () => {};
    const result = new Promise<WriteResult | 'timeout'>((resolve, reject) => {
      let settled = false;
      settle = (done) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.waiters.delete(jobId);
        done();
      };
      const timer = setTimeout(() => settle(() => resolve('timeout')), ttlMs);
      this.waiters.set(jobId, (reply) =>
        settle(() => ('result' in reply ? resolve(reply.result) : reject(new Error(reply.failed)))),
      );
    });
    return { result, cancel: () => settle(() => {}) };
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
  }
}
