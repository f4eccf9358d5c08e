import type { Request } from 'express';
import { errors } from '../common/errors.js';
import { isValidIdempotencyKey } from '../common/idempotency/fingerprint.js';
import { isJsonObject, type JsonObject } from '../common/json.js';

function parseBoolean(param: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') {
    const lowered = value.toLowerCase();
    if (lowered === 'true') return true;
    if (lowered === 'false') return false;
  }
  throw errors.invalidParameter(param, `${param} must be true or false, sent once.`);
}

/** `?dry_run=` or `Dry-Run:`; both may be sent, but they must agree (product.md §3). */
export function parseDryRun(req: Request): boolean {
  const fromQuery = parseBoolean('dry_run', req.query.dry_run);
  const fromHeader = parseBoolean('Dry-Run', req.get('Dry-Run'));
  if (fromQuery !== undefined && fromHeader !== undefined && fromQuery !== fromHeader) {
    throw errors.invalidParameter(
      'dry_run',
      'The dry_run query parameter and the Dry-Run header disagree.',
    );
  }
  return fromQuery ?? fromHeader ?? false;
}

export function parseIdempotencyKey(req: Request): string | null {
  let count = 0;
  for (let index = 0; index < req.rawHeaders.length; index += 2) {
    if (req.rawHeaders[index]?.toLowerCase() === 'idempotency-key') count += 1;
  }
  if (count === 0) return null;
  if (count > 1) throw errors.invalidIdempotencyKey('Send the Idempotency-Key header once.');
  const key = req.get('Idempotency-Key') ?? '';
  if (!isValidIdempotencyKey(key)) {
    throw errors.invalidIdempotencyKey(
      'An Idempotency-Key is 1 to 255 printable ASCII characters.',
    );
  }
  return key;
}

/** Whether the request carries any bytes of body (an empty one, `Content-Length: 0`, does not). */
export const hasBody = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

export function rejectUnknownQuery(req: Request, allowed: readonly string[]): void {
  for (const name of Object.keys(req.query)) {
    if (!allowed.includes(name))
      throw errors.invalidParameter(name, `${name} is not a recognised query parameter.`);
  }
}

/** Deeper than any resource needs (an address is two levels), shallow enough for recursive code. */
const MAX_BODY_DEPTH = 32;

/** Nesting deep enough to overflow the recursive canonical form is refused; the walk itself does not recurse. */
function checkBodyDepth(body: JsonObject): void {
  const pending: { value: unknown; depth: number }[] = [{ value: body, depth: 1 }];
  for (let item = pending.pop(); item; item = pending.pop()) {
    if (typeof item.value !== 'object' || item.value === null) continue;
    if (item.depth > MAX_BODY_DEPTH) {
      throw errors.invalidJson(
        `The request body is nested more than ${MAX_BODY_DEPTH} levels deep.`,
      );
    }
    for (const child of Object.values(item.value))
      pending.push({ value: child, depth: item.depth + 1 });
  }
}

/** The JSON object body of a POST or PATCH (already parsed by express.json). */
export function jsonBodyOf(req: Request): JsonObject {
  if (req.method === 'DELETE') return {};
  if (!isJsonObject(req.body)) throw errors.invalidJson();
  checkBodyDepth(req.body);
  return req.body;
}
