import type { RequestHandler } from 'express';
import { keyIdOf } from '../../common/auth/apiKeys.js';
import type { AuditLog } from '../../common/audit/log.js';
import { pathTemplate } from '../../common/openapi/document.js';

/**
 * GETs that read one person's record, and so are recorded (trust.md §3), with the type of that
 * record: an export is a read of its donor, found in that donor's history.
 */
const auditedReads = new Map([
  ['/api/v1/donors/:id', 'donor'],
  ['/api/v1/donors/:id/export', 'donor'],
  ['/api/v1/students/:id', 'student'],
]);

const writeMethods = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

interface Answer {
  object?: unknown;
  id?: unknown;
}

/**
 * Records what trust.md §3 names in the audit log: every write (committed, refused, dry run or
 * replayed), every 401 and 403, and every read of one donor or student or an export (a CSV
 * answer, a PDF or a zip of them). Only the route's template, the status and the record
 * concerned are kept: never a value of the path (beyond that record's id), the query or a body.
 */
export function auditTrail(
  log: AuditLog,
  objectOfCollection: ReadonlyMap<string, string>,
): RequestHandler {
  return (req, res, next) => {
    const occurredAt = new Date();
    // Read now: once the client has gone, the socket has no address and req.ip throws.
    const ip = req.socket.remoteAddress === undefined ? null : (req.ip ?? null);
    let answer: Answer | null = null;
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      if (body && typeof body === 'object') answer = body as Answer;
      return json(body);
    };
    res.once('finish', () => {
      const route = res.locals.route;
      if (route === undefined) return;
      const status = res.statusCode;
      // An export: a CSV report, a PDF document or a zip of them.
      const exported = /^(text\/csv|application\/pdf|application\/zip)/.test(
        String(res.getHeader('Content-Type') ?? ''),
      );
      if (
        !writeMethods.has(req.method) &&
        status !== 401 &&
        status !== 403 &&
        !(auditedReads.has(route) && status === 200) &&
        !exported
      )
        return;
      const principal = res.locals.principal as typeof res.locals.principal | undefined;
      const template = route.slice('/api/v1'.length);
      // The record: as the answer names it, else as the path does (a refused write of one).
      const path = req.originalUrl.split('?')[0]!.slice('/api/v1'.length);
      const recordId = /^\/[^/]+\/:id(\/|$)/.test(template) ? path.split('/')[2] : undefined;
      const read = status === 200 ? auditedReads.get(route) : undefined;
      const named =
        !read && answer && typeof answer.object === 'string' && answer.object !== 'list';
      const objectType = read
        ? read
        : named
          ? (answer!.object as string)
          : recordId !== undefined
            ? (objectOfCollection.get(`/${template.split('/')[1]}`) ?? null)
            : null;
      const objectId =
        named && (typeof answer!.id === 'number' || typeof answer!.id === 'string')
          ? String(answer!.id)
          : recordId !== undefined && /^[A-Za-z0-9_]{1,40}$/.test(recordId)
            ? recordId
            : null;
      log.record({
        institutionId: principal?.institution.id ?? null,
        occurredAt,
        apiKeyId: principal?.apiKeyId ?? keyIdOf(req.get('X-Service-API-Key') ?? ''),
        requestId: res.locals.requestId,
        method: req.method,
        route: pathTemplate(template),
        status,
        objectType,
        objectId,
        dryRun: String(req.query.dry_run ?? req.get('Dry-Run') ?? '').toLowerCase() === 'true',
        replayed: res.getHeader('Idempotent-Replayed') === 'true',
        ip,
      });
    });
    next();
  };
}
