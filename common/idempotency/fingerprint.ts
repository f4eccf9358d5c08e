import { hash } from 'node:crypto';
import { canonicalJson } from '../json.js';
import type { WriteRequest } from '../commands/command.js';

/**
 * The identity of a write for idempotency: command (method and route), path parameters and
 * the body in canonical form, so key order and whitespace do not matter but values do.
 */
export function fingerprintOf(commandName: string, request: WriteRequest): string {
  // The one-shot hash: a Hash object per write cost twice as much, on every write's hot path.
  return hash(
    'sha256',
    canonicalJson({ command: commandName, params: request.params, body: request.body }),
    'base64url',
  );
}

/** interface.md §8: 1 to 255 printable ASCII characters. */
export const isValidIdempotencyKey = (key: string) => /^[\x20-\x7e]{1,255}$/.test(key);
