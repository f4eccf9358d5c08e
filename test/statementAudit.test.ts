import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { ApiClient, fillInstitution } from '../cli/demo/seed.js';
import { listenToStatements } from '../common/db/statementLog.js';
import { purgeExpiredReceipts } from '../common/idempotency/receipts.js';
import { pruneEvents } from '../common/events/retention.js';
import { routeTable } from '../api/routes.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { tenantTables, unscopedStatements } from './helpers/statementAudit.js';
import { waitFor } from './helpers/wait.js';

/**
 * Every statement the service sends about a tenant's records names the institution
 * (test/helpers/statementAudit.ts). The whole demo is filled through the API (every resource, the money record,
 * pledges, recurring gifts, receipts, refunds, voids) with a webhook endpoint receiving every
 * event, then every list and record is read, and the maintenance runs; each statement is
 * recorded as sent and checked.
 */
let service: TestService;
let receiver: Server;
const statements = new Set<string>();

beforeAll(async () => {
  // Answers the first send of each event 503 and the next 204: attempts retried and settled.
  const seen = new Set<string>();
  receiver = createServer((request, response) => {
    request.resume();
    const id = String(request.headers['webhook-id']);
    response.writeHead(seen.has(id) ? 204 : 503).end();
    seen.add(id);
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  service = await startTestService({
    WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${port}`,
    WEBHOOK_RETRY_SCHEDULE: '0.2',
  });
  listenToStatements((statement) => statements.add(statement));
  const endpoint = await service.call('POST', '/api/v1/webhook-endpoints', {
    body: { url: `http://127.0.0.1:${port}/hook`, enabled_events: ['*'] },
  });
  expect(endpoint.status).toBe(201);
});

afterAll(async () => {
  listenToStatements(null);
  await service?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

test('every statement on a tenant table names institution_id', async () => {
  const client = new ApiClient(service.url, service.tenant.key);
  await fillInstitution(client);
  // Every event delivered: the dispatch, the deliveries' reads and their recorded attempts.
  await waitFor(
    async () =>
      Number(
        await service.db.oneFirst(sql.unsafe`
          SELECT (SELECT count(*) FROM events WHERE institution_id = ${service.tenant.institutionId})
               - (SELECT count(*) FROM webhook_deliveries
                  WHERE institution_id = ${service.tenant.institutionId} AND status = 'delivered')`),
      ) === 0,
    60_000,
    'every event delivered',
  );
  const auth = { 'X-Service-API-Key': service.tenant.key };
  for (const route of routeTable()) {
    if (route.method !== 'get' || route.path.includes('openapi')) continue;
    const path = route.path.replace(':id', '1');
    // A required parameter takes its example (a fiscal year), else the first of its values
    // when it has a set of them, else 1.
    const readQuery =
      route.doc.kind === 'record-read' || route.doc.kind === 'institution-read'
        ? Object.entries(route.doc.read.query)
        : [];
    const requiredRead = readQuery
      .filter(([, parameter]) => parameter.required)
      .map(([name, parameter]) => {
        const values = parameter.schema.enum;
        const example = parameter.schema.example;
        return `${name}=${example !== undefined ? String(example) : Array.isArray(values) ? String(values[0]) : '1'}`;
      });
    const requiredList =
      route.doc.kind === 'list'
        ? (route.doc.list.required ?? []).map((name) => {
            const description =
              route.doc.kind === 'list' ? route.doc.list.filters[name]?.description : undefined;
            return `${name}=${description?.kind === 'pattern' ? description.example : '1'}`;
          })
        : [];
    const names = [...requiredList, ...requiredRead];
    const required = names.length ? `?${names.join('&')}` : '';
    const response = await fetch(`${service.url}/api/v1${path}${required}`, { headers: auth });
    // A record the demo has not (a tag, event 1, webhook endpoint 1) is a 404, whose query is
    // audited all the same.
    const expected = /\/1(\/|$)/.test(path) && response.status === 404 ? 404 : 200;
    expect({ path, status: response.status }).toEqual({ path, status: expected });
  }
  // The operator's view reads across institutions too (the outbox lag).
  expect((await fetch(`${service.url}/metrics`)).status).toBe(200);
  await purgeExpiredReceipts(service.db);
  await pruneEvents(service.db, 90);

  const unscoped = unscopedStatements(statements, await tenantTables(service.db));
  expect(statements.size).toBeGreaterThan(50);
  // The webhook side was audited too: a delivery read and attempts recorded.
  for (const sent of [
    /FROM webhook_deliveries d\s+JOIN webhook_endpoints/,
    /INSERT INTO webhook_delivery_attempts/,
  ])
    expect([...statements].some((statement) => sent.test(statement))).toBe(true);
  expect(unscoped).toEqual([]);
}, 120_000);
