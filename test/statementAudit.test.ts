import { sql } from 'slonik';
import { z } from 'zod';
import { ApiClient, fillInstitution } from '../cli/demo/seed.js';
import { listenToStatements } from '../common/db/statementLog.js';
import { purgeExpiredReceipts } from '../common/idempotency/receipts.js';
import { pruneEvents } from '../common/events/retention.js';
import { routeTable } from '../api/routes.js';
import { startTestService, type TestService } from './helpers/harness.js';

/**
 * Every statement the service sends about a tenant's records names the institution (the
 * distribution column of a sharded database, and the guard against one tenant's request reading
 * another's). The whole demo is filled through the API (every resource, the money record,
 * pledges, recurring gifts, receipts, refunds, voids), then every list and record is read, and
 * the maintenance runs; each statement is recorded as sent and checked.
 */
let service: TestService;
const statements = new Set<string>();

beforeAll(async () => {
  service = await startTestService();
  listenToStatements((statement) => statements.add(statement));
});

afterAll(async () => {
  listenToStatements(null);
  await service?.close();
});

/**
 * The statements that deliberately span institutions, each with its reason. Anything else that
 * touches a tenant table without naming `institution_id` fails the audit.
 */
const crossTenant: { pattern: RegExp; reason: string }[] = [
  {
    pattern:
      /DELETE FROM write_receipts\s+WHERE ctid IN \(SELECT ctid FROM write_receipts WHERE expires_at/,
    reason: 'maintenance: expired idempotency receipts of every institution',
  },
  { pattern: /DELETE FROM events/, reason: 'maintenance: events past their retention' },
  {
    pattern: /DELETE FROM webhook_(delivery_attempts|deliveries) WHERE ctid IN/,
    reason: 'maintenance: webhook deliveries and attempts past the events’ retention',
  },
];

test('every statement on a tenant table names institution_id', async () => {
  const client = new ApiClient(service.url, service.tenant.key);
  await fillInstitution(client);
  const auth = { 'X-Service-API-Key': service.tenant.key };
  for (const route of routeTable()) {
    if (route.method !== 'get' || route.path.includes('openapi')) continue;
    const path = route.path.replace(':id', '1');
    const required =
      route.doc.kind === 'list' && route.doc.list.required?.length
        ? `?${route.doc.list.required.map((name) => `${name}=1`).join('&')}`
        : '';
    const response = await fetch(`${service.url}/api/v1${path}${required}`, { headers: auth });
    // A record the demo has not (a tag, event 1, webhook endpoint 1) is a 404, whose query is
    // audited all the same.
    const expected = /\/1(\/|$)/.test(path) && response.status === 404 ? 404 : 200;
    expect({ path, status: response.status }).toEqual({ path, status: expected });
  }
  await purgeExpiredReceipts(service.db);
  await pruneEvents(service.db, 90);

  const tenantTables = (
    await service.db.anyFirst(sql.type(z.object({ table_name: z.string() }))`
      SELECT DISTINCT table_name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = 'institution_id'`)
  ).map(String);
  const touches = (statement: string) =>
    tenantTables.some((table) =>
      new RegExp(`\\b(FROM|JOIN|INTO|UPDATE)\\s+"?${table}"?\\b`, 'i').test(statement),
    );
  const unscoped = [...statements].filter(
    (statement) =>
      touches(statement) &&
      !/institution_id/.test(statement) &&
      !crossTenant.some(({ pattern }) => pattern.test(statement)),
  );
  expect(statements.size).toBeGreaterThan(50);
  expect(unscoped).toEqual([]);
}, 120_000);
