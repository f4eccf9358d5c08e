import type { RequestHandler } from 'express';
import { pathId } from '../common/commands/command.js';
import { errors } from '../common/errors.js';
import { cancelImport, commitImport } from '../common/imports/commands.js';
import { errorsCsv, templateCsv } from '../common/imports/errorsCsv.js';
import {
  importDuplicatesOfImport,
  importErrorsOfImport,
  importList,
} from '../common/imports/list.js';
import { findFile, findImport } from '../common/imports/queries.js';
import { importResources, presentImport, type ImportResource } from '../common/imports/schema.js';
import type { EndpointDoc } from '../common/openapi/routeDoc.js';
import type { DatabasePool } from 'slonik';
import { childListHandler, listHandler, writeHandler, type ListSettings } from './handlers.js';
import { importUploadHandler, type UploadDeps } from './importUpload.js';
import { rejectUnknownQuery } from './requestParsing.js';
import type { WriteGateway } from './writeGateway.js';

export interface ImportRouteDeps {
  pool: DatabasePool;
  gateway: WriteGateway;
  lists: ListSettings;
  imports: UploadDeps['config'];
}

export interface ImportRoute {
  method: 'get' | 'post';
  path: string;
  handler: RequestHandler;
  doc: EndpointDoc;
  /** The body is a file the handler streams itself, not a JSON object. */
  upload?: true;
}

const doc = (operation: Extract<EndpointDoc, { kind: 'import' }>['operation']): EndpointDoc => ({
  kind: 'import',
  operation,
});

function retrieveImport(pool: DatabasePool): RequestHandler {
  return async (req, res) => {
    rejectUnknownQuery(req, []);
    const id = pathId({ params: { id: String(req.params.id) }, body: {} });
    const found = id && (await findImport(pool, res.locals.principal.institution.id, id));
    if (!found) throw errors.notFound('import');
    res.json(presentImport(found));
  };
}

function errorsCsvHandler(pool: DatabasePool): RequestHandler {
  return async (req, res) => {
    rejectUnknownQuery(req, []);
    const institutionId = res.locals.principal.institution.id;
    const id = pathId({ params: { id: String(req.params.id) }, body: {} });
    const found = id && (await findImport(pool, institutionId, id));
    const file = found && (await findFile(pool, institutionId, found.file_id));
    if (!found || !file) throw errors.notFound('import');
    res.status(200);
    res.type('text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="import-${found.id}-errors.csv"`);
    for await (const text of errorsCsv(pool, found, file)) {
      if (!res.write(text)) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
  };
}

const templateHandler =
  (resource: ImportResource): RequestHandler =>
  (req, res) => {
    rejectUnknownQuery(req, []);
    res.type('text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="${resource}.csv"`);
    res.send(templateCsv(resource));
  };

/**
 * Imports (integration.md §3): an upload (api/importUpload.ts), the imports as a list and one by
 * one, the two writes on one import, and its failed rows as a list and as CSV.
 */
export function importRoutes(deps: ImportRouteDeps): ImportRoute[] {
  const { pool, gateway, lists } = deps;
  return [
    {
      method: 'get',
      path: '/imports',
      handler: listHandler(pool, lists, importList),
      doc: doc('list'),
    },
    {
      method: 'post',
      path: '/imports',
      handler: importUploadHandler({ pool, gateway, config: deps.imports }),
      doc: doc('create'),
      upload: true,
    },
    ...importResources.map((resource) => ({
      method: 'get' as const,
      path: `/imports/templates/${resource}.csv`,
      handler: templateHandler(resource),
      doc: doc(`template-${resource}`),
    })),
    { method: 'get', path: '/imports/:id', handler: retrieveImport(pool), doc: doc('retrieve') },
    {
      method: 'post',
      path: '/imports/:id/commit',
      handler: writeHandler(gateway, commitImport),
      doc: doc('commit'),
    },
    {
      method: 'post',
      path: '/imports/:id/cancel',
      handler: writeHandler(gateway, cancelImport),
      doc: doc('cancel'),
    },
    {
      method: 'get',
      path: '/imports/:id/errors',
      handler: childListHandler(pool, lists, importErrorsOfImport),
      doc: doc('errors'),
    },
    {
      method: 'get',
      path: '/imports/:id/duplicates',
      handler: childListHandler(pool, lists, importDuplicatesOfImport),
      doc: doc('duplicates'),
    },
    {
      method: 'get',
      path: '/imports/:id/errors.csv',
      handler: errorsCsvHandler(pool),
      doc: doc('errors-csv'),
    },
  ];
}
