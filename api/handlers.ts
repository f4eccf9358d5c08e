import { deliveryExists, webhookAttemptList } from '../common/webhooks/attempts.js';
import type { Request, RequestHandler, Response } from 'express';
import { sql, type DatabasePool } from 'slonik';
import { pathId, type Command, type WriteRequest } from '../common/commands/command.js';
import { ApiError, errors } from '../common/errors.js';
import type { WriteJob } from '../common/commands/runWrite.js';
import type { WriteResult } from '../common/commands/writeResult.js';
import { retrieveEvent } from '../common/events/event.js';
import { fingerprintOf } from '../common/idempotency/fingerprint.js';
import type { JsonObject } from '../common/json.js';
import { listPage, type RangeReading } from '../common/pagination/listPage.js';
import { parseListRequest } from '../common/pagination/listRequest.js';
import type { ListSpec } from '../common/pagination/listSpec.js';
import { writeReportCsv } from '../common/reports/csv.js';
import type {
  ChildCollectionDescriptor,
  DocumentDescriptor,
  RecordDownloadDescriptor,
  InstitutionReadDescriptor,
  ReadParameter,
  RecordReadDescriptor,
  Retrieval,
} from '../common/resources/descriptor.js';
import {
  jsonBodyOf,
  parseDryRun,
  parseIdempotencyKey,
  rejectUnknownQuery,
} from './requestParsing.js';
import type { WriteGateway } from './writeGateway.js';

function sendResult(res: Response, result: WriteResult, dryRun: boolean): void {
  if (!result.ok) throw new ApiError(result.status, result.error, result.headers);
  if (result.location && !dryRun) res.setHeader('Location', result.location);
  if (result.replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.status(result.status).json(result.body);
}

/** Any create, update or delete: parse, then a dry run here or a real write through the queue. */
export function writeHandler(gateway: WriteGateway, command: Command): RequestHandler {
  return async (req, res) => {
    rejectUnknownQuery(req, ['dry_run']);
    const dryRun = parseDryRun(req);
    const idempotencyKey = parseIdempotencyKey(req);
    const request: WriteRequest = {
      params: { ...req.params } as Record<string, string>,
      body: jsonBodyOf(req),
    };
    if (!idempotencyKey && command.requiresIdempotencyKey?.(request))
      throw errors.idempotencyKeyRequired();
    const { principal, requestId } = res.locals;
    const job: WriteJob = {
      command: command.name,
      institution: principal.institution,
      apiKeyId: principal.apiKeyId,
      requestId,
      request,
      fingerprint: fingerprintOf(command.name, request),
      idempotencyKey,
    };
    const result = dryRun ? await gateway.dryRun(command, job) : await gateway.submit(job);
    sendResult(res, result, dryRun);
  };
}

/**
 * GET /things/{id}: a record of another institution is as absent as a missing one. A record that
 * is also a document answers `Accept: application/pdf` with its PDF, and an `Accept` that takes
 * neither JSON nor PDF with 406; JSON stays the default.
 */
export function retrieveHandler(
  pool: DatabasePool,
  resource: string,
  retrieve: Retrieval,
  document?: DocumentDescriptor,
): RequestHandler {
  const types = ['application/json', ...(document ? ['application/pdf'] : [])];
  return async (req, res) => {
    rejectUnknownQuery(req, []);
    const wanted = document ? req.accepts(types) : 'application/json';
    if (!wanted) throw errors.notAcceptable(types);
    const id = pathId({ params: { ...req.params } as Record<string, string>, body: {} });
    const institutionId = res.locals.principal.institution.id;
    if (document) res.vary('Accept');
    if (wanted === 'application/pdf' && document) {
      const pdf = id ? await document.render(pool, institutionId, id) : null;
      if (!pdf || id === null) throw errors.notFound(resource);
      res.type('application/pdf');
      res.setHeader('Content-Disposition', `inline; filename="${document.filename(id)}"`);
      res.send(pdf);
      return;
    }
    const body = id ? await retrieve(pool, institutionId, id) : null;
    if (!body) throw errors.notFound(resource);
    res.json(body);
  };
}

/**
 * GET /things/{id}/<read>: an answer computed about one record, its query parsed by the read's
 * own parameters. A record of another institution is as absent as a missing one.
 */
/** A read's query parameters, each parsed; an absent optional one is null. */
function readQueryOf(
  req: Request,
  parameters: Record<string, ReadParameter>,
): Record<string, string | null> {
  rejectUnknownQuery(req, Object.keys(parameters));
  const query: Record<string, string | null> = {};
  for (const [name, parameter] of Object.entries(parameters)) {
    const raw = req.query[name];
    if (raw === undefined) {
      if (parameter.required) throw errors.parameterMissing(name);
      query[name] = null;
    } else if (typeof raw !== 'string') {
      throw errors.invalidParameter(name, `${name} must be sent once, as text.`);
    } else query[name] = parameter.parse(name, raw);
  }
  return query;
}

/** GET of a computed answer about the institution's records (a report that is one object). */
export function institutionReadHandler(
  pool: DatabasePool,
  read: Pick<InstitutionReadDescriptor, 'query' | 'read'>,
): RequestHandler {
  return async (req, res) => {
    const query = readQueryOf(req, read.query);
    res.json(await read.read(pool, res.locals.principal.institution.id, query));
  };
}

export function recordReadHandler(
  pool: DatabasePool,
  resource: string,
  read: Pick<RecordReadDescriptor, 'query' | 'read'>,
): RequestHandler {
  return async (req, res) => {
    const query = readQueryOf(req, read.query);
    const id = pathId({ params: { ...req.params } as Record<string, string>, body: {} });
    const body = id ? await read.read(pool, res.locals.principal.institution.id, id, query) : null;
    if (!body) throw errors.notFound(resource);
    res.json(body);
  };
}

/**
 * GET /things/{id}/<file>: a file made of one record, streamed; a record of another institution
 * is as absent as a missing one. Once streaming has begun an error can only cut the answer off.
 */
export function downloadHandler(
  pool: DatabasePool,
  resource: string,
  download: RecordDownloadDescriptor,
): RequestHandler {
  return async (req, res) => {
    rejectUnknownQuery(req, []);
    const id = pathId({ params: { ...req.params } as Record<string, string>, body: {} });
    const write = id ? await download.open(pool, res.locals.principal.institution.id, id) : null;
    if (!write || id === null) throw errors.notFound(resource);
    res.status(200);
    res.type(download.contentType);
    res.setHeader('Content-Disposition', `attachment; filename="${download.filename(id)}"`);
    try {
      await write(res);
    } catch (error) {
      res.destroy(error instanceof Error ? error : undefined);
    }
  };
}

/** GET /events/{id}: an event of another institution is as absent as a missing one. */
export function retrieveEventHandler(pool: DatabasePool): RequestHandler {
  return async (req, res) => {
    rejectUnknownQuery(req, []);
    const id = String(req.params.id);
    const body = await retrieveEvent(pool, res.locals.principal.institution.id, id);
    if (!body) throw errors.notFound('event');
    res.json(body);
  };
}

export function readHandler(read: (res: Response) => Promise<JsonObject>): RequestHandler {
  return async (req, res) => {
    rejectUnknownQuery(req, []);
    res.json(await read(res));
  };
}

export interface ListSettings {
  /** Signs cursors (CURSOR_SECRET). */
  secret: string;
  ttlSeconds: number;
  /** How a range filter's page is read (LIST_RANGE_WALK_ROWS, LIST_RANGE_SORT_ROWS). */
  ranges: RangeReading;
}

/** One page of a list on the cursor engine, for the institution asking. */
function pageOf<Row>(
  pool: DatabasePool,
  lists: ListSettings,
  spec: ListSpec<Row>,
  query: Request['query'],
  institutionId: number,
) {
  const context = {
    institutionId,
    secret: lists.secret,
    nowSeconds: Math.floor(Date.now() / 1000),
  };
  const request = parseListRequest(spec, query, context);
  return listPage(pool, spec, request, {
    ...context,
    ttlSeconds: lists.ttlSeconds,
    ranges: lists.ranges,
  });
}

/**
 * GET of a report list: a page as JSON, or with `Accept: text/csv` the whole report for its
 * filters as CSV (writeReportCsv), which takes no cursor and no limit.
 */
export function reportListHandler<Row>(
  pool: DatabasePool,
  lists: ListSettings,
  spec: ListSpec<Row>,
  columns: readonly string[],
): RequestHandler {
  return async (req, res) => {
    const institutionId = res.locals.principal.institution.id;
    if (req.accepts(['application/json', 'text/csv']) !== 'text/csv') {
      res.json(await pageOf(pool, lists, spec, req.query, institutionId));
      return;
    }
    for (const param of ['limit', 'starting_after', 'ending_before'])
      if (req.query[param] !== undefined)
        throw errors.invalidParameter(
          param,
          `${param} is not used with Accept: text/csv, which answers the whole report.`,
        );
    const { filters } = parseListRequest(spec, req.query, {
      institutionId,
      secret: lists.secret,
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    res.status(200);
    res.type('text/csv; charset=utf-8');
    const name = spec.endpoint.split('/').at(-1)!;
    res.setHeader('Content-Disposition', `attachment; filename="${name}.csv"`);
    await writeReportCsv(pool, spec, columns, filters, institutionId, async (text) => {
      if (res.destroyed) return false;
      if (!res.write(text)) await new Promise((resolve) => res.once('drain', resolve));
      return !res.destroyed;
    });
    res.end();
  };
}

export function listHandler<Row>(
  pool: DatabasePool,
  lists: ListSettings,
  spec: ListSpec<Row>,
): RequestHandler {
  return async (req, res) => {
    res.json(await pageOf(pool, lists, spec, req.query, res.locals.principal.institution.id));
  };
}

/**
 * GET /things/{id}/children: the list of one parent record, 404 when the parent is not the
 * caller's. The endpoint is the parent's own (`/api/v1/gifts/7/refunds`), so a cursor of one
 * parent is refused on another's.
 */
export function childListHandler(
  pool: DatabasePool,
  lists: ListSettings,
  child: Pick<ChildCollectionDescriptor, 'list' | 'parent' | 'ofParent'>,
): RequestHandler {
  return async (req, res) => {
    const institutionId = res.locals.principal.institution.id;
    const id = await parentOf(pool, child, req, institutionId);
    const spec = {
      ...child.list,
      endpoint: child.list.endpoint.replace(':id', String(id)),
      where: child.list.where
        ? sql.fragment`${child.list.where} AND ${child.ofParent(id)}`
        : child.ofParent(id),
    };
    res.json(await pageOf(pool, lists, spec, req.query, institutionId));
  };
}

/** The parent record's id of a child route (`/gifts/7/refunds`): 404 unless it is the caller's. */
async function parentOf(
  pool: DatabasePool,
  child: Pick<ChildCollectionDescriptor, 'parent'>,
  req: Request,
  institutionId: number,
): Promise<number> {
  const id = pathId({ params: { id: String(req.params.id) }, body: {} });
  const found =
    id !== null &&
    (await pool.exists(sql.unsafe`
      SELECT 1 FROM ${sql.identifier([child.parent.table])}
      WHERE institution_id = ${institutionId} AND id = ${id}`));
  if (!found || id === null) throw errors.notFound(child.parent.label);
  return id;
}

/**
 * GET /things/{id}/children/{child_id}: one record of one parent (where a create's Location
 * points), 404 when the parent is not the caller's or the record is not the parent's.
 */
export function childRetrieveHandler(
  pool: DatabasePool,
  child: Pick<ChildCollectionDescriptor, 'parent' | 'param' | 'label' | 'retrieve'>,
): RequestHandler {
  return async (req, res) => {
    rejectUnknownQuery(req, []);
    const institutionId = res.locals.principal.institution.id;
    const parentId = await parentOf(pool, child, req, institutionId);
    const id = pathId({ params: { id: String(req.params[child.param]) }, body: {} });
    const body = id ? await child.retrieve(pool, institutionId, parentId, id) : null;
    if (!body) throw errors.notFound(child.label);
    res.json(body);
  };
}

/**
 * GET /webhook-endpoints/{id}/deliveries/{delivery_id}/attempts: one delivery's attempts, 404
 * when the endpoint or the delivery is not the caller's. The endpoint is the delivery's own, so
 * a cursor of one delivery is refused on another's.
 */
export function deliveryAttemptListHandler(
  pool: DatabasePool,
  lists: ListSettings,
): RequestHandler {
  return async (req, res) => {
    const institutionId = res.locals.principal.institution.id;
    const endpointId = pathId({ params: { id: String(req.params.id) }, body: {} });
    const deliveryId = pathId({ params: { id: String(req.params.delivery_id) }, body: {} });
    const found =
      endpointId !== null &&
      deliveryId !== null &&
      (await deliveryExists(pool, institutionId, endpointId, deliveryId));
    if (!found || deliveryId === null) throw errors.notFound('webhook delivery');
    const spec = {
      ...webhookAttemptList,
      endpoint: webhookAttemptList.endpoint
        .replace(':id', String(endpointId))
        .replace(':delivery_id', String(deliveryId)),
      where: sql.fragment`delivery_id = ${deliveryId}`,
    };
    res.json(await pageOf(pool, lists, spec, req.query, institutionId));
  };
}
