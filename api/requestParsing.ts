import type { Request } from 'express';
import { errors, type FieldError } from '../common/errors.js';
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
    throw errors.invalidParameter('dry_run', 'The dry_run query parameter and the Dry-Run header disagree.');
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
    throw errors.invalidIdempotencyKey('An Idempotency-Key is 1 to 255 printable ASCII characters.');
  }
  return key;
}

export function rejectUnknownQuery(req: Request, allowed: readonly string[]): void {
  for (const name of Object.keys(req.query)) {
    if (!allowed.includes(name)) throw errors.invalidParameter(name, `${name} is not a recognised query parameter.`);
  }
}

/** Deeper than any resource needs (an address is two levels), shallow enough for recursive code. */
const MAX_BODY_DEPTH = 32;

/**
 * Refuses what JSON allows but the service cannot hold: nesting deep enough to overflow the
 * recursive canonical form (a 500 before), and the NUL character, which Postgres text rejects
 * (a 500 from the worker before). Walks without recursion, so the check itself cannot overflow.
 */
function checkBodyContents(body: JsonObject): void {
  const nulFields: FieldError[] = [];
  const pending: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '', depth: 1 }];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const { value, path, depth } = item;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) {
        nulFields.push({ param: path, code: 'invalid_format', message: 'must not contain the NUL character (\\u0000)' });
      }
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_BODY_DEPTH) throw errors.invalidJson(`The request body is nested more than ${MAX_BODY_DEPTH} levels deep.`);
    const entries: [string, unknown][] = Array.isArray(value)
      ? value.map((element, index): [string, unknown] => [String(index), element])
      : Object.entries(value);
    for (const [name, child] of entries.reverse()) {
      const childPath = path ? `${path}.${name}` : name;
      if (name.includes('\u0000')) {
        nulFields.push({ param: childPath, code: 'invalid_format', message: 'a field name must not contain the NUL character (\\u0000)' });
      }
      pending.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  if (nulFields.length) throw errors.validationFailed(nulFields);
}

/** The JSON object body of a POST or PATCH (already parsed by express.json). */
export function jsonBodyOf(req: Request): JsonObject {
  if (req.method === 'DELETE') return {};
  if (!isJsonObject(req.body)) throw errors.invalidJson();
  checkBodyContents(req.body);
  return req.body;
}
