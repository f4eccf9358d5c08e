import { lookup } from 'node:dns/promises';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
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

/**
 * The address to connect to: the url's host resolved, refused unless every address it resolves
 * to is public (or the operator allowed the host). The connection then goes to the address
 * judged here, never to a second resolution, so a name that rebinds cannot slip through.
 */
async function resolveTarget(url: URL): Promise<{ address: string; family: number }> {
  const literal = literalAddress(url);
  const addresses = literal
    ? [{ address: literal, family: literal.includes(':') ? 6 : 4 }]
    : await lookup(url.hostname, { all: true });
  if (!isAllowedHost(url) && addresses.some((entry) => !isPublicAddress(entry.address)))
    throw new Error('the host resolves to a loopback, private, link-local or reserved address');
  const first = addresses[0];
  if (!first) throw new Error('the host has no address');
  return first;
}

/** One POST of an event to an endpoint; never throws. Redirects are answers, not followed. */
export async function sendWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
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
  try {
    const target = await resolveTarget(url);
    const pinned: LookupFunction = (_host, options, callback) => {
      if (options.all) callback(null, [target]);
      else callback(null, target.address, target.family);
    };
    const options: RequestOptions = {
      method: 'POST',
      lookup: pinned,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'donor-gift-service-webhooks',
      },
      signal: timeout,
    };
    // Node's global agents keep connections alive, per host and port: a send may reuse one
    // opened earlier, to an address judged public then. The name was judged again just above,
    // so one that rebinds to a private address is refused before any request goes out.
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
  }
}
