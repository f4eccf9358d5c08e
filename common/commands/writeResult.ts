import type { ErrorBody } from '../errors.js';
import type { JsonObject } from '../json.js';

/** Business outcomes travel back as data: BullMQ passes a thrown error on only as a string. */
export type WriteResult =
  | { ok: true; status: number; body: JsonObject; location: string | null; replayed: boolean }
  | { ok: false; status: number; error: ErrorBody; headers?: Record<string, string> };
