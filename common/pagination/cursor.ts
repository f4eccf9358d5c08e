import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { z } from 'zod';

/**
 * A cursor is a signed token, not a page number or an id: it binds the position to the
 * institution, the endpoint and the filters that produced it, and expires.
 * Format: base64url(JSON payload) "." base64url(HMAC-SHA256(secret, payload part)).
 */
export type Direction = 'after' | 'before';

export interface CursorPayload {
  /** institution id */
  i: number;
  /** endpoint path, e.g. /api/v1/gifts */
  e: string;
  /** pinned filters, normalised */
  f: Record<string, string>;
  /** keyset position: the id of the row the page starts after or ends before */
  k: number;
  /**
   * That row's sort value, as Postgres writes it (text, so that a timestamp or a numeric comes
   * back exactly), on a list ordered by a sort value and then the id; absent on the others, so
   * their cursors are as they always were.
   */
  v?: string;
  /** which way it pages */
  d: Direction;
  /** expiry, seconds since the epoch */
  x: number;
}

const payloadSchema = z.strictObject({
  i: z.number().int().positive(),
  e: z.string(),
  f: z.record(z.string(), z.string()),
  k: z.number().int().nonnegative(),
  v: z.string().optional(),
  d: z.enum(['after', 'before']),
  x: z.number().int(),
});

/** The secret as a key object, made once: importing a raw secret costs more than the HMAC. */
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret));
    keys.set(secret, key);
  }
  return key;
}

const sign = (secret: string, data: string) =>
  createHmac('sha256', keyOf(secret)).update(data).digest();

export function encodeCursor(secret: string, payload: CursorPayload): string {
  const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${data}.${sign(secret, data).toString('base64url')}`;
}

/** The payload of a genuine, unexpired cursor, or null for anything else. */
export function decodeCursor(
  secret: string,
  token: string,
  nowSeconds: number,
): CursorPayload | null {
  const match = /^([A-Za-z0-9_-]{1,4096})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match?.[1] || !match[2]) return null;
  const expected = sign(secret, match[1]);
  const presented = Buffer.from(match[2], 'base64url');
  // A non-canonical spelling (spare bits set in the last character) is a changed token too.
  if (presented.toString('base64url') !== match[2]) return null;
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(match[1], 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const payload = payloadSchema.safeParse(parsed);
  // `x` is the whole second of issue plus the TTL: a cursor lives until that second has passed,
  // so at least the TTL (at `x <= now` one issued late in a second lived under it, a 1-second
  // cursor a few milliseconds).
  if (!payload.success || payload.data.x < nowSeconds) return null;
  return payload.data;
}
