import type { RequestHandler } from 'express';
import type { DatabasePool } from 'slonik';
import { errors } from '../common/errors.js';
import { findInstitution, presentInstitution } from '../common/institutions.js';
import {
  createDonor,
  deleteDonorCommand,
  updateDonorCommand,
} from '../common/resources/donors/commands.js';
import { createFund, updateFundCommand } from '../common/resources/funds/commands.js';
import {
  createGift,
  deleteGiftCommand,
  updateGiftCommand,
} from '../common/resources/gifts/commands.js';
import {
  retrieveDonor,
  retrieveFund,
  retrieveGift,
  retrieveUser,
} from '../common/resources/retrieve.js';
import { createUser, updateUserCommand } from '../common/resources/users/commands.js';
import { readHandler, retrieveHandler, writeHandler } from './handlers.js';
import type { WriteGateway } from './writeGateway.js';

export type Method = 'get' | 'post' | 'patch' | 'delete';

export interface Route {
  method: Method;
  path: string;
  handler: RequestHandler;
}

/** The API at a glance; every path is under /api/v1. */
export function apiRoutes(pool: DatabasePool, gateway: WriteGateway): Route[] {
  return [
    {
      method: 'get',
      path: '/institution',
      handler: readHandler(async (res) => {
        const row = await findInstitution(pool, res.locals.principal.institution.id);
        if (!row) throw errors.invalidApiKey();
        return presentInstitution(row);
      }),
    },

    { method: 'post', path: '/donors', handler: writeHandler(gateway, createDonor) },
    { method: 'get', path: '/donors/:id', handler: retrieveHandler(pool, 'donor', retrieveDonor) },
    { method: 'patch', path: '/donors/:id', handler: writeHandler(gateway, updateDonorCommand) },
    { method: 'delete', path: '/donors/:id', handler: writeHandler(gateway, deleteDonorCommand) },

    { method: 'post', path: '/gifts', handler: writeHandler(gateway, createGift) },
    { method: 'get', path: '/gifts/:id', handler: retrieveHandler(pool, 'gift', retrieveGift) },
    { method: 'patch', path: '/gifts/:id', handler: writeHandler(gateway, updateGiftCommand) },
    { method: 'delete', path: '/gifts/:id', handler: writeHandler(gateway, deleteGiftCommand) },

    { method: 'post', path: '/funds', handler: writeHandler(gateway, createFund) },
    { method: 'get', path: '/funds/:id', handler: retrieveHandler(pool, 'fund', retrieveFund) },
    { method: 'patch', path: '/funds/:id', handler: writeHandler(gateway, updateFundCommand) },

    { method: 'post', path: '/users', handler: writeHandler(gateway, createUser) },
    { method: 'get', path: '/users/:id', handler: retrieveHandler(pool, 'user', retrieveUser) },
    { method: 'patch', path: '/users/:id', handler: writeHandler(gateway, updateUserCommand) },
  ];
}
