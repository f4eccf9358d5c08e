import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** How the receiver answers: a status, a redirect to another url, or never. */
export type Answer = number | { redirect: string } | 'hang';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it was answered with; null while (or if forever) unanswered. */
  answered: number | null;
}

export interface VerifiedEvent {
  id: string;
  type: string;
  created_at: string;
  data: { object: { id: number } };
}

/**
 * A webhook receiver on loopback, as a customer would run one: it keeps every request it got,
 * answers each as `answer` says at the time, and verifies signatures with the Standard Webhooks
 * library.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  answer: Answer = 204;
  private server: Server | null = null;
  private readonly waiting = new Map<ServerResponse, Received>();
  port = 0;

  async start(): Promise<this> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const entry: Received = {
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          answered: null,
        };
        this.received.push(entry);
        const answer = this.answer;
        if (answer === 'hang') {
          this.waiting.set(response, entry);
          response.on('close', () => this.waiting.delete(response));
          return;
        }
        const status = typeof answer === 'number' ? answer : 302;
        entry.answered = status;
        response
          .writeHead(status, typeof answer === 'number' ? {} : { location: answer.redirect })
          .end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Requests held unanswered right now. */
  get hanging(): number {
    return this.waiting.size;
  }

  /** Answers every request held so far with `status`. */
  release(status: number): void {
    for (const [response, entry] of this.waiting) {
      entry.answered = status;
      response.writeHead(status).end();
    }
    this.waiting.clear();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /**
   * Every request, verified with the endpoint's secret (throws on a bad signature, as a
   * receiver would refuse it), with the status it was answered with.
   */
  verified(secret: string): (VerifiedEvent & { answered: number | null })[] {
    const webhook = new Webhook(secret);
    return this.received.map((entry) => {
      const event = webhook.verify(entry.body, {
        'webhook-id': String(entry.headers['webhook-id']),
        'webhook-timestamp': String(entry.headers['webhook-timestamp']),
        'webhook-signature': String(entry.headers['webhook-signature']),
      }) as VerifiedEvent;
      // The header and the body name the same event.
      if (event.id !== entry.headers['webhook-id']) throw new Error('webhook-id is not the event');
      return { ...event, answered: entry.answered };
    });
  }

  /** How many times each event id was received, and how many of those were answered 2xx. */
  tally(secret: string): Map<string, { received: number; accepted: number }> {
    const counts = new Map<string, { received: number; accepted: number }>();
    for (const event of this.verified(secret)) {
      const count = counts.get(event.id) ?? { received: 0, accepted: 0 };
      count.received += 1;
      if (event.answered !== null && event.answered >= 200 && event.answered < 300)
        count.accepted += 1;
      counts.set(event.id, count);
    }
    return counts;
  }
}
