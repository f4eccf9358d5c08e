import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { Agent as HttpAgent, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import {
  deliveryTimeoutMs,
  isAllowedHost,
  isPublicAddress,
  literalAddress,
  urlProblem,
} from './policy.js';

export interface Attempt {
  /** The answer's status, or null when there was none (refused, timed out, not allowed). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** `webhook-signature`: one `v1,` signature per secret, space-separated (Standard Webhooks). */
export function signatures(
  secrets: readonly string[],
  id: string,
  timestamp: Date,
  body: string,
): string {
  return secrets.map((secret) => new Webhook(secret).sign(id, timestamp, body)).join(' ');
}

/** Every address a name resolves to, as `dns.lookup` with `all` answers them. */
export type Resolve = (hostname: string) => Promise<readonly LookupAddress[]>;

const systemResolve: Resolve = (hostname) => lookup(hostname, { all: true });

/**
 * `work`, or the signal's reason once it aborts. A lookup cannot be cancelled (getaddrinfo runs
 * on libuv's thread pool until the system resolver gives up), but the attempt need not wait for
 * it: it fails at the delivery's timeout like a receiver that does not answer.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * The address to connect to: the url's host resolved, refused unless every address it resolves
 * to is public (or the operator allowed the host). The connection then goes to the address
 * judged here, never to a second resolution, so a name that rebinds cannot slip through.
 */
async function resolveTarget(
  url: URL,
  resolve: Resolve,
  signal: AbortSignal,
): Promise<LookupAddress> {
  const literal = literalAddress(url);
  const addresses = literal
    ? [{ address: literal, family: literal.includes(':') ? 6 : 4 }]
    : await untilAborted(resolve(url.hostname), signal);
  if (!isAllowedHost(url) && addresses.some((entry) => !isPublicAddress(entry.address)))
    throw new Error('the host resolves to a loopback, private, link-local or reserved address');
  const first = addresses[0];
  if (!first) throw new Error('the host has no address');
  return first;
}

/**
 * One POST of an event to an endpoint; never throws. Redirects are answers, not followed. The
 * whole attempt, the name's resolution included, is bounded by the delivery's timeout.
 */
export async function sendWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  resolve: Resolve = systemResolve,
): Promise<Attempt> {
  const started = Date.now();
  const done = (statusCode: number | null, error: string | null): Attempt => ({
    statusCode,
    error,
    durationMs: Date.now() - started,
  });
  const problem = urlProblem(rawUrl);
  if (problem) return done(null, `url ${problem}`);
  const url = new URL(rawUrl);
  const timeoutMs = deliveryTimeoutMs();
  const timeout = AbortSignal.timeout(timeoutMs);
  // An agent of the attempt's own, not Node's global one: the global agent follows an
  // environment proxy (NODE_USE_ENV_PROXY with HTTPS_PROXY/HTTP_PROXY), which would resolve the
  // name again and connect past the address judged here; and it keeps connections alive, to
  // addresses judged in earlier attempts.
  let agent: HttpAgent | null = null;
  try {
    const target = await resolveTarget(url, resolve, timeout);
    const pinned: LookupFunction = (_host, options, callback) => {
      if (options.all) callback(null, [target]);
      else callback(null, target.address, target.family);
    };
    agent =
      url.protocol === 'https:'
        ? new HttpsAgent({ keepAlive: false, lookup: pinned })
        : new HttpAgent({ keepAlive: false, lookup: pinned });
    const options: RequestOptions = {
      method: 'POST',
      agent,
      lookup: pinned,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'donor-gift-service-webhooks',
      },
      signal: timeout,
    };
    const statusCode = await new Promise<number>((resolve, reject) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const outgoing = send(url, options, (response) => {
        // The answer's body is not kept; reading it lets the connection finish.
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
    return done(statusCode, statusCode >= 200 && statusCode < 300 ? null : `HTTP ${statusCode}`);
  } catch (error) {
    // The signal says whether the time ran out: the error's class is no guide, as an error made
    // in another realm (a test's VM context) fails `instanceof Error`.
    const message = timeout.aborted
      ? `no answer within ${timeoutMs / 1000} s`
      : typeof (error as { message?: unknown } | null)?.message === 'string'
        ? (error as { message: string }).message
        : String(error);
    return done(null, message.slice(0, 500));
  } finally {
    agent?.destroy();
  }
}
