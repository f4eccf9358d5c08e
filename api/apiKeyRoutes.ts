import type { RequestHandler } from 'express';
import type { DatabasePool } from 'slonik';
import { apiKeyCommands } from '../common/apiKeys/commands.js';
import { apiKeyIdentity, apiKeyList, findApiKey, presentApiKey } from '../common/apiKeys/schema.js';
import { errors } from '../common/errors.js';
import type { EndpointDoc } from '../common/openapi/routeDoc.js';
import { listHandler, writeHandler, type ListSettings } from './handlers.js';
import { rejectUnknownQuery } from './requestParsing.js';
import type { WriteGateway } from './writeGateway.js';

type ApiKeyOperation = Extract<EndpointDoc, { kind: 'api-key' }>['operation'];

export interface ApiKeyRoute {
  method: 'get' | 'post' | 'delete';
  path: string;
  handler: RequestHandler;
  doc: EndpointDoc;
}

const doc = (operation: ApiKeyOperation): EndpointDoc => ({ kind: 'api-key', operation });

/** GET /api-keys/{id}: another institution's key is as absent as a missing one. */
function retrieveApiKey(pool: DatabasePool): RequestHandler {
  return async (req, res) => {
    rejectUnknownQuery(req, []);
    const found = await findApiKey(
      pool,
      res.locals.principal.institution.id,
      String(req.params.id),
    );
    if (!found) throw errors.notFound(apiKeyIdentity.label);
    res.json(presentApiKey(found));
  };
}

/**
 * Keys as a resource (trust.md §2). Not a resource descriptor: a key's id is text (its public
 * id), where descriptors' records have integer ids. Writes go through the queue as any write.
 */
export function apiKeyRoutes(deps: {
  pool: DatabasePool;
  gateway: WriteGateway;
  lists: ListSettings;
}): ApiKeyRoute[] {
  const { pool, gateway, lists } = deps;
  const [create, roll, revoke] = apiKeyCommands;
  return [
    {
      method: 'get',
      path: '/api-keys',
      handler: listHandler(pool, lists, apiKeyList),
      doc: doc('list'),
    },
    {
      method: 'post',
      path: '/api-keys',
      handler: writeHandler(gateway, create!),
      doc: doc('create'),
    },
    { method: 'get', path: '/api-keys/:id', handler: retrieveApiKey(pool), doc: doc('retrieve') },
    {
      method: 'delete',
      path: '/api-keys/:id',
      handler: writeHandler(gateway, revoke!),
      doc: doc('revoke'),
    },
    {
      method: 'post',
      path: '/api-keys/:id/roll',
      handler: writeHandler(gateway, roll!),
      doc: doc('roll'),
    },
  ];
}
