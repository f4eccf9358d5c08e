import { readFile } from 'node:fs/promises';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { routeTable } from '../api/routes.js';
import { buildOpenApiDocument, pathTemplate } from '../common/openapi/document.js';
import { resources } from '../common/resources/index.js';
import { describeFilter } from '../common/pagination/listSpec.js';
import { Contract, contract } from './helpers/contract.js';
import { startTestService, type TestService } from './helpers/harness.js';

type Json = Record<string, unknown>;

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

const routes = routeTable();
const generated = buildOpenApiDocument(routes);
const operationOf = (method: string, template: string) =>
  generated.paths[template]?.[method] as Json | undefined;
const parameterNames = (operation: Json) =>
  (operation.parameters as Json[]).map((parameter) => {
    const ref = parameter.$ref as string | undefined;
    const resolved = ref
      ? (generated.components.parameters as Record<string, Json>)[ref.split('/').at(-1)!]!
      : parameter;
    return `${resolved.in as string}:${resolved.name as string}`;
  });

describe('GET /api/v1/openapi.json', () => {
  test('is served without an API key, as the OpenAPI 3.1 document of the route table', async () => {
    const response = await service.call<Json>('GET', '/api/v1/openapi.json', { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toMatch(/^application\/json/);
    expect(response.headers.get('Request-Id')).toMatch(/^req_/);
    expect(response.body.openapi).toBe('3.1.0');
    expect(response.body).toEqual(JSON.parse(JSON.stringify(generated)));
  });

  test('needs no key but ignores none: a wrong key is not even looked at', async () => {
    const response = await service.call('GET', '/api/v1/openapi.json', { key: 'not-a-key' });
    expect(response.status).toBe(200);
  });

  test('other methods on its path are 405 with Allow: GET, key or no key', async () => {
    for (const key of [null, undefined]) {
      const response = await service.call<{ error: { code: string } }>(
        'POST',
        '/api/v1/openapi.json',
        { key, body: {} },
      );
      expect(response.status).toBe(405);
      expect(response.headers.get('Allow')).toBe('GET');
      expect(response.body.error.code).toBe('method_not_allowed');
    }
  });

  test('equals openapi.json at the repository root (run `npm run openapi` after a change)', async () => {
    const written: unknown = JSON.parse(
      await readFile(new URL('../openapi.json', import.meta.url), 'utf8'),
    );
    expect(written).toEqual(JSON.parse(JSON.stringify(generated)));
  });

  test('is deterministic: two builds serialise byte for byte the same', () => {
    expect(JSON.stringify(buildOpenApiDocument(routeTable()))).toBe(JSON.stringify(generated));
  });
});

describe('the document lints clean', () => {
  test('Redocly’s recommended rules find no error, and warn only where the API has no 4xx to document', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({
      source: JSON.stringify(generated),
      absoluteRef: 'openapi.json',
      config,
    });
    const found = problems.map((problem) => ({
      severity: problem.severity,
      rule: problem.ruleId,
      at: problem.location[0]?.pointer,
      message: problem.message,
    }));
    expect(found.filter((problem) => problem.severity === 'error')).toEqual([]);
    // Liveness, readiness and this document answer no client error; the service has no license.
    expect(found.map(({ rule, at }) => `${rule} ${at}`).sort()).toEqual([
      'info-license #/info',
      'operation-4xx-response #/paths/~1api~1v1~1openapi.json/get/responses',
      'operation-4xx-response #/paths/~1health/get/responses',
      'operation-4xx-response #/paths/~1ready/get/responses',
    ]);
  });

  test('every schema compiles as JSON Schema 2020-12 in strict mode', () => {
    const checker = new Contract(generated);
    // A response that the schemas could not judge would throw here rather than pass.
    expect(
      checker.check({
        method: 'GET',
        path: '/health',
        status: 200,
        headers: new Headers({
          'Content-Type': 'application/json',
          'Request-Id': 'req_0123456789abcdef01234567',
        }),
        body: { status: 'ok' },
      }),
    ).toBeNull();
  });
});

describe('the document covers the route table', () => {
  test('every route of apiRoutes() is an operation, and there is no operation without a route', () => {
    const fromRoutes = routes.map((route) => `${route.method} ${pathTemplate(route.path)}`).sort();
    const operator = ['/api/v1/openapi.json', '/health', '/ready', '/metrics'];
    const documented = Object.entries(generated.paths)
      .filter(([template]) => !operator.includes(template))
      .flatMap(([template, item]) => Object.keys(item).map((method) => `${method} ${template}`))
      .sort();
    expect(documented).toEqual(fromRoutes);
    expect(fromRoutes).toEqual(
      expect.arrayContaining([
        'get /api/v1/institution',
        'get /api/v1/scholarships/awarded-students',
      ]),
    );
  });

  test('operation ids are unique', () => {
    const ids = Object.values(generated.paths).flatMap((item) =>
      Object.values(item).map((operation) => operation.operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
  });

  test.each(routes.filter((route) => route.doc.kind === 'write'))(
    '$method $path takes Idempotency-Key, Dry-Run and dry_run',
    (route) => {
      const operation = operationOf(route.method, pathTemplate(route.path))!;
      expect(parameterNames(operation)).toEqual(
        expect.arrayContaining(['header:Idempotency-Key', 'header:Dry-Run', 'query:dry_run']),
      );
      const responses = operation.responses as Json;
      expect(Object.keys(responses)).toEqual(
        expect.arrayContaining(['400', '401', '409', '422', '500', '503', '504']),
      );
    },
  );

  test.each(routes.filter((route) => route.doc.kind === 'list'))(
    '$method $path takes the page parameters and exactly the filters of its ListSpec',
    (route) => {
      if (route.doc.kind !== 'list') throw new Error('not a list');
      const filters = Object.keys(route.doc.list.filters);
      for (const filter of Object.values(route.doc.list.filters))
        expect(describeFilter(filter)).not.toBeNull();
      const operation = operationOf(route.method, pathTemplate(route.path))!;
      expect(parameterNames(operation).sort()).toEqual(
        ['limit', 'starting_after', 'ending_before', ...filters].map((n) => `query:${n}`).sort(),
      );
    },
  );

  test.each(resources.map((doc) => [doc.text.component, doc] as const))(
    'the %s request bodies have exactly the fields of its Shape',
    (component, doc) => {
      const schemas = generated.components.schemas;
      const create = schemas[`${component}Create`];
      const update = schemas[`${component}Update`];
      // A resource without create (duplicate pairs, which donor writes make) has no body at all.
      if (!doc.commands.create) {
        expect([create, update]).toEqual([undefined, undefined]);
        return;
      }
      const fields = Object.keys(doc.shape);
      expect(Object.keys(create!.properties as Json)).toEqual(fields);
      expect(create!.additionalProperties).toBe(false);
      expect(create!.required ?? []).toEqual(
        fields.filter((name) => doc.shape[name]!.required === true),
      );
      // A resource without update (receipts) has no update body.
      if (!doc.commands.update) {
        expect(update).toBeUndefined();
        return;
      }
      expect(Object.keys(update!.properties as Json)).toEqual(fields);
      expect(update!.required).toBeUndefined();
    },
  );
});

describe('the contract check', () => {
  const headers = (contentType = 'application/json') =>
    new Headers({ 'Content-Type': contentType, 'Request-Id': 'req_0123456789abcdef01234567' });

  test('passes a real response and fails one that the document does not describe', async () => {
    const created = await service.call<Json>('POST', '/api/v1/users', {
      body: { email: 'grace@example.org', first_name: 'Grace', last_name: 'Hopper' },
    });
    expect(created.status).toBe(201);
    const real = { method: 'POST', path: '/api/v1/users', status: 201, headers: created.headers };
    expect(contract().check({ ...real, body: created.body })).toBeNull();

    const cases: [string, Partial<Parameters<Contract['check']>[0]>, RegExp][] = [
      [
        'a field missing',
        { body: { ...created.body, email: undefined } },
        /must have required property 'email'/,
      ],
      [
        'a field not documented',
        { body: { ...created.body, secret: 1 } },
        /must NOT have additional properties/,
      ],
      ['a wrong type', { body: { ...created.body, id: '5' } }, /body\/id must be integer/],
      ['a status not documented', { status: 202 }, /a status createUser .* does not document/],
      [
        'an error code the operation cannot return',
        {
          status: 400,
          body: {
            error: {
              type: 'invalid_request_error',
              code: 'invalid_cursor',
              message: 'x',
              request_id: 'req_0123456789abcdef01234567',
            },
          },
        },
        /must be equal to one of the allowed values/,
      ],
      [
        'no Request-Id',
        { headers: new Headers({ 'Content-Type': 'application/json' }) },
        /Request-Id header is missing/,
      ],
      [
        'not JSON',
        { headers: headers('text/html') },
        /Content-Type text\/html is not one of application\/json/,
      ],
    ];
    for (const [label, change, problem] of cases) {
      expect([label, contract().check({ ...real, body: created.body, ...change })]).toEqual([
        label,
        expect.stringMatching(problem),
      ]);
    }
  });

  // Each goes through service.call, so the check runs on it: the test fails if it is undocumented.
  test.each([
    ['GET', '/api/v1/donations', undefined, 404],
    ['GET', '/api/v1/donors/%E0%A4%A', undefined, 404],
    ['GET', '/api/v1/donors/abc', undefined, 404],
    ['PUT', '/api/v1/donors/1', undefined, 405],
    ['OPTIONS', '/api/v1/institution', undefined, 405],
    ['GET', '/api/v1/nope', null, 401],
    ['GET', '/nope', null, 404],
    ['HEAD', '/api/v1/institution', undefined, 200],
    ['GET', '/api/v1/DONORS/', undefined, 200],
    ['GET', '/api/v1/donors?limit=abc', undefined, 400],
    ['GET', '/ready', null, 200],
  ] as const)('%s %s (key %s) answers %i as documented', async (method, path, key, status) => {
    const response = await service.call(method, path, { key });
    expect(response.status).toBe(status);
  });

  test.each([
    ['not JSON', 415, { 'Content-Type': 'text/plain' }, 'hello'],
    ['malformed JSON', 400, { 'Content-Type': 'application/json' }, '{'],
    ['too large', 413, { 'Content-Type': 'application/json' }, `{"x":"${'a'.repeat(110_000)}"}`],
  ] as const)('a write with a body %s answers %i', async (_label, status, headers, rawBody) => {
    const response = await service.call('POST', '/api/v1/funds', { headers, rawBody });
    expect(response.status).toBe(status);
  });

  test('holds a request that matches no operation to the documented 404 and 405 errors', async () => {
    const unknown = await service.call('GET', '/api/v1/donations');
    expect(unknown.status).toBe(404);
    const wrongMethod = await service.call('PUT', '/api/v1/donors/1', { body: {} });
    expect(wrongMethod.status).toBe(405);
    const lie = {
      method: 'GET',
      path: '/api/v1/donations',
      status: 404,
      headers: headers(),
      body: {
        error: {
          type: 'invalid_request_error',
          code: 'resource_not_found',
          message: 'x',
          request_id: 'req_0123456789abcdef01234567',
        },
      },
    };
    expect(contract().check(lie)).toMatch(/may only get route_not_found/);
    expect(contract().check({ ...lie, status: 200, body: {} })).toMatch(/has no operation/);
  });
});
