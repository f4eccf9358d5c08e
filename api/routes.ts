import type { RequestHandler } from 'express';
import type { DatabasePool } from 'slonik';
import type { Command } from '../common/commands/command.js';
import { errors } from '../common/errors.js';
import { findInstitution, presentInstitution } from '../common/institutions.js';
import type { DocumentedRoute, EndpointDoc } from '../common/openapi/routeDoc.js';
import type { ListSpec } from '../common/pagination/listSpec.js';
import {
  createAwardCycle,
  updateAwardCycleCommand,
} from '../common/resources/awardCycles/commands.js';
import { awardCycleList } from '../common/resources/awardCycles/list.js';
import { createAward, updateAwardCommand } from '../common/resources/awards/commands.js';
import { awardList } from '../common/resources/awards/list.js';
import {
  createDonor,
  deleteDonorCommand,
  updateDonorCommand,
} from '../common/resources/donors/commands.js';
import { donorList } from '../common/resources/donors/list.js';
import { createFund, updateFundCommand } from '../common/resources/funds/commands.js';
import { fundList } from '../common/resources/funds/list.js';
import {
  createGift,
  deleteGiftCommand,
  updateGiftCommand,
} from '../common/resources/gifts/commands.js';
import { giftList } from '../common/resources/gifts/list.js';
import * as retrieve from '../common/resources/retrieve.js';
import {
  createScholarship,
  updateScholarshipCommand,
} from '../common/resources/scholarships/commands.js';
import { scholarshipList } from '../common/resources/scholarships/list.js';
import { awardedStudentList, fundSummaryList } from '../common/resources/scholarships/reports.js';
import { createStudent, updateStudentCommand } from '../common/resources/students/commands.js';
import { studentList } from '../common/resources/students/list.js';
import { createUser, updateUserCommand } from '../common/resources/users/commands.js';
import { userList } from '../common/resources/users/list.js';
import {
  listHandler,
  readHandler,
  retrieveHandler,
  writeHandler,
  type CursorSettings,
} from './handlers.js';
import type { WriteGateway } from './writeGateway.js';

export type Method = 'get' | 'post' | 'patch' | 'delete';

export interface Route {
  method: Method;
  path: string;
  handler: RequestHandler;
  /** What the route serves, for the OpenAPI document (common/openapi). */
  doc: EndpointDoc;
}

/** A handler and what it serves. */
interface Endpoint {
  handler: RequestHandler;
  doc: EndpointDoc;
}

export interface RouteDeps {
  pool: DatabasePool;
  gateway: WriteGateway;
  cursors: CursorSettings;
}

const route = (method: Method, path: string, endpoint: Endpoint): Route => ({
  method,
  path,
  ...endpoint,
});

/** The API at a glance; every path is under /api/v1. */
export function apiRoutes({ pool, gateway, cursors }: RouteDeps): Route[] {
  const write = (command: Command): Endpoint => ({
    handler: writeHandler(gateway, command),
    doc: { kind: 'write', command },
  });
  const one = (resource: string, retrieval: retrieve.Retrieval): Endpoint => ({
    handler: retrieveHandler(pool, resource, retrieval),
    doc: { kind: 'retrieve', resource },
  });
  const list = <Row>(spec: ListSpec<Row>): Endpoint => ({
    handler: listHandler(pool, cursors, spec),
    doc: { kind: 'list', list: spec },
  });
  const institution: Endpoint = {
    handler: readHandler(async (res) => {
      const row = await findInstitution(pool, res.locals.principal.institution.id);
      if (!row) throw errors.invalidApiKey();
      return presentInstitution(row);
    }),
    doc: { kind: 'institution' },
  };

  return [
    route('get', '/institution', institution),

    route('get', '/donors', list(donorList)),
    route('post', '/donors', write(createDonor)),
    route('get', '/donors/:id', one('donor', retrieve.retrieveDonor)),
    route('patch', '/donors/:id', write(updateDonorCommand)),
    route('delete', '/donors/:id', write(deleteDonorCommand)),

    route('get', '/gifts', list(giftList)),
    route('post', '/gifts', write(createGift)),
    route('get', '/gifts/:id', one('gift', retrieve.retrieveGift)),
    route('patch', '/gifts/:id', write(updateGiftCommand)),
    route('delete', '/gifts/:id', write(deleteGiftCommand)),

    route('get', '/funds', list(fundList)),
    route('post', '/funds', write(createFund)),
    route('get', '/funds/:id', one('fund', retrieve.retrieveFund)),
    route('patch', '/funds/:id', write(updateFundCommand)),

    route('get', '/users', list(userList)),
    route('post', '/users', write(createUser)),
    route('get', '/users/:id', one('user', retrieve.retrieveUser)),
    route('patch', '/users/:id', write(updateUserCommand)),

    route('get', '/award-cycles', list(awardCycleList)),
    route('post', '/award-cycles', write(createAwardCycle)),
    route('get', '/award-cycles/:id', one('award cycle', retrieve.retrieveAwardCycle)),
    route('patch', '/award-cycles/:id', write(updateAwardCycleCommand)),

    route('get', '/students', list(studentList)),
    route('post', '/students', write(createStudent)),
    route('get', '/students/:id', one('student', retrieve.retrieveStudent)),
    route('patch', '/students/:id', write(updateStudentCommand)),

    route('get', '/scholarships', list(scholarshipList)),
    route('post', '/scholarships', write(createScholarship)),
    // The reports come before /scholarships/:id, which would otherwise take them for an id.
    route('get', '/scholarships/awarded-students', list(awardedStudentList)),
    route('get', '/scholarships/fund-summaries', list(fundSummaryList)),
    route('get', '/scholarships/:id', one('scholarship', retrieve.retrieveScholarship)),
    route('patch', '/scholarships/:id', write(updateScholarshipCommand)),

    route('get', '/awards', list(awardList)),
    route('post', '/awards', write(createAward)),
    route('get', '/awards/:id', one('award', retrieve.retrieveAward)),
    route('patch', '/awards/:id', write(updateAwardCommand)),
  ];
}

/**
 * The table alone, for the OpenAPI document (npm run openapi, GET /api/v1/openapi.json): its
 * handlers are built but never called, so they get dependencies that refuse any use.
 */
export function routeTable(): DocumentedRoute[] {
  const unusable = new Proxy(
    {},
    {
      get() {
        throw new Error('routeTable() is for documentation: its handlers cannot run');
      },
    },
  );
  const deps = { pool: unusable, gateway: unusable, cursors: unusable } as RouteDeps;
  return apiRoutes(deps).map(({ method, path, doc }) => ({ method, path, doc }));
}
