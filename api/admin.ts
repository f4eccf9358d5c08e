/**
 * The operators' queue dashboard (Bull Board) at /admin/queues. It is mounted only when
 * ADMIN_TOKEN is configured, and then answers only callers that present that token:
 *
 * - a browser: HTTP Basic authentication, any user name and the token as the password (the
 *   browser asks for it once, on the 401's `WWW-Authenticate: Basic` challenge);
 * - a script: `Authorization: Bearer <token>`.
 *
 * No cookie and no login form, so there is no session to steal or forge across sites. Serve it
 * over TLS only: Basic credentials are merely encoded. The dashboard is read-only: a write job
 * retried by hand could commit a write its client was already told had failed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Router, type Request, type RequestHandler } from 'express';
import { ApiError } from '../common/errors.js';
import type { WriteQueue } from '../common/queue.js';
import type { DeliveryQueue } from '../common/webhooks/queue.js';
import type { Queue } from 'bullmq';

const ADMIN_QUEUES_PATH = '/admin/queues';

export interface AdminDashboardOptions {
  /** ADMIN_TOKEN: at least 16 characters. */
  token: string;
  /** The write queues: one, or one per shard (WRITE_QUEUE_SHARDS). */
  queues: readonly WriteQueue[];
  /** The webhook deliveries, shown beside the writes. */
  webhookQueue: DeliveryQueue;
  /** The import chunks, shown beside the writes and webhooks. */
  importQueue: Queue;
}

const unauthorized = () =>
  new ApiError(
    401,
    {
      type: 'authentication_error',
      code: 'invalid_admin_token',
      message:
        'The queue dashboard needs the operator token (ADMIN_TOKEN): send it as the HTTP Basic ' +
        'password or as "Authorization: Bearer <token>".',
    },
    { 'WWW-Authenticate': 'Basic realm="Queue dashboard", charset="UTF-8"' },
  );

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** The credential the request presents: a Bearer token, or the password of HTTP Basic. */
function presentedToken(req: Request): string | null {
  const header = req.get('Authorization') ?? '';
  const bearer = /^Bearer +(\S+)\s*$/i.exec(header);
  if (bearer?.[1]) return bearer[1];
  const basic = /^Basic +([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (basic?.[1]) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon === -1 ? null : decoded.slice(colon + 1);
  }
  return null;
}

/** Compares SHA-256 digests in constant time, so neither timing nor length gives the token away. */
function requireToken(token: string): RequestHandler {
  const expected = digest(token);
  return (req, res, next) => {
    res.locals.route = ADMIN_QUEUES_PATH;
    const presented = presentedToken(req);
    if (presented === null || !timingSafeEqual(digest(presented), expected)) throw unauthorized();
    res.set('Cache-Control', 'no-store');
    next();
  };
}

/** Bull Board's page links its fonts from Google's servers: the one tag that leaves this host. */
const thirdPartyLinks = /<link[^>]+href="https?:\/\/[^"]*"[^>]*>/g;

/**
 * An operator console must work offline and tell no third party that it was opened: the page is
 * sent without links off this host (the browser's own fonts stand in), and its Content Security
 * Policy lets it load nothing from elsewhere, whatever a later Bull Board adds.
 */
const servedFromHere: RequestHandler = (_req, res, next) => {
  res.set(
    'Content-Security-Policy',
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  );
  const send = res.send.bind(res);
  res.send = (body?: unknown) =>
    send(typeof body === 'string' ? body.replace(thirdPartyLinks, '') : body);
  next();
};

export function adminDashboard({
  token,
  queues,
  webhookQueue,
  importQueue,
}: AdminDashboardOptions): Router {
  const board = new ExpressAdapter();
  board.setBasePath(ADMIN_QUEUES_PATH);
  createBullBoard({
    queues: [
      ...queues.map(
        (queue) =>
          new BullMQAdapter(queue, {
            readOnlyMode: true,
            description:
              queues.length === 1
                ? 'Writes waiting for, held by, or finished by a worker'
                : `Writes of the institutions of shard ${queue.name}: waiting for, held by, or finished by a worker`,
          }),
      ),
      new BullMQAdapter(webhookQueue, {
        readOnlyMode: true,
        description:
          'Webhook deliveries: sends waiting, delayed until their next retry, finished, or failed for good',
      }),
      new BullMQAdapter(importQueue, {
        readOnlyMode: true,
        description:
          'Import chunks waiting for or held by a worker (a chunk done leaves the queue: an import’s progress is GET /api/v1/imports/{id})',
      }),
    ],
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'Donor and gift writes', hideDocsLink: true } },
  });
  const router = Router();
  router.use(ADMIN_QUEUES_PATH, requireToken(token), servedFromHere, board.getRouter());
  return router;
}
