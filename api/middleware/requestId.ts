import { randomFillSync } from 'node:crypto';
import type { RequestHandler } from 'express';

const ID_BYTES = 12;
/** Random bytes for many ids at once: one call to the system's generator per 256 requests. */
const pool = Buffer.alloc(ID_BYTES * 256);
let offset = pool.length;

function nextId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  offset += ID_BYTES;
  return `req_${pool.toString('hex', offset - ID_BYTES, offset)}`;
}

/** Every response carries Request-Id; error bodies repeat it and log lines carry it. */
export const requestId: RequestHandler = (_req, res, next) => {
  const id = nextId();
  res.locals.requestId = id;
  res.setHeader('Request-Id', id);
  next();
};
