import { keyWith } from './helpers/apiKeys.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { waitFor } from './helpers/wait.js';

interface AuditEvent {
  object: string;
  id: number;
  occurred_at: string;
  api_key_id: string | null;
  request_id: string;
  method: string;
  route: string;
  status: number;
  object_type: string | null;
  object_id: string | null;
  dry_run: boolean;
  replayed: boolean;
  ip: string | null;
}

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

const auditEvents = async (query = '') =>
  (await service.call<{ data: AuditEvent[] }>('GET', `/api/v1/audit-events?limit=100${query}`)).body
    .data;

/** The row of one request, once it is written (within seconds: the log is written in batches). */
async function rowOf(requestId: string | null): Promise<AuditEvent> {
  let found: AuditEvent | undefined;
  await waitFor(
    async () => {
      found = (await auditEvents()).find((row) => row.request_id === requestId);
      return found !== undefined;
    },
    5_000,
    `the audit row of ${requestId}`,
  );
  return found!;
}

test('writes, refusals, reads of one donor and key actions each leave one row, with templates and no values', async () => {
  const email = 'grace.hopper@example.org';
  const donor = await service.call('POST', '/api/v1/donors', {
    body: { role: 'Individual', first_name: 'Grace', last_name: 'Hopper', email },
    headers: { 'Idempotency-Key': 'grace' },
  });
  expect(donor.status).toBe(201);
  const id = String(donor.body.id);
  const replay = await service.call('POST', '/api/v1/donors', {
    body: { role: 'Individual', first_name: 'Grace', last_name: 'Hopper', email },
    headers: { 'Idempotency-Key': 'grace' },
  });
  const dryRun = await service.call('PATCH', `/api/v1/donors/${id}?dry_run=true`, {
    body: { phone: '+1 555 0100' },
  });
  const refused = await service.call('PATCH', `/api/v1/donors/${id}`, { body: { email: 'nope' } });
  const read = await service.call('GET', `/api/v1/donors/${id}`);
  const exported = await service.call('GET', `/api/v1/donors/${id}/export`);
  const readOnly = await keyWith(service.db, service.tenant.institutionId, {
    '*': 'read',
    audit: 'none',
  });
  const forbidden = await service.call('DELETE', `/api/v1/donors/${id}`, { key: readOnly.key });
  const wrongSecret = `${service.tenant.key.slice(0, -32)}${'A'.repeat(32)}`;
  const unauthorised = await service.call('GET', `/api/v1/donors?q=${email}`, { key: wrongSecret });
  const made = await service.call('POST', '/api/v1/api-keys', {
    body: { name: 'Mailing house', permissions: { donors: 'read' } },
  });
  const listed = await service.call('GET', `/api/v1/donors?q=${encodeURIComponent(email)}`);

  const expectRow = async (
    response: { headers: Headers },
    expected: Partial<AuditEvent>,
  ): Promise<AuditEvent> => {
    const row = await rowOf(response.headers.get('Request-Id'));
    expect(row).toMatchObject({ object: 'audit_event', ...expected });
    return row;
  };
  const tenantKey = service.tenant.apiKeyId;
  await expectRow(donor, {
    api_key_id: tenantKey,
    method: 'POST',
    route: '/api/v1/donors',
    status: 201,
    object_type: 'donor',
    object_id: id,
    dry_run: false,
    replayed: false,
  });
  await expectRow(replay, { status: 201, replayed: true, object_id: id });
  await expectRow(dryRun, { method: 'PATCH', route: '/api/v1/donors/{id}', dry_run: true });
  await expectRow(refused, { status: 422, object_type: 'donor', object_id: id });
  await expectRow(read, {
    method: 'GET',
    route: '/api/v1/donors/{id}',
    status: 200,
    object_id: id,
  });
  await expectRow(exported, {
    method: 'GET',
    route: '/api/v1/donors/{id}/export',
    status: 200,
    object_type: 'donor',
    object_id: id,
  });
  await expectRow(forbidden, { api_key_id: readOnly.id, status: 403, object_id: id });
  await expectRow(unauthorised, { api_key_id: tenantKey, route: '/api/v1/donors', status: 401 });
  const keyRow = await expectRow(made, { route: '/api/v1/api-keys', object_type: 'api_key' });
  expect(keyRow.object_id).toBe(made.body.id);
  // A list of donors is no read of one donor.
  await service.call('GET', '/api/v1/institution');
  const all = await auditEvents();
  expect(all.some((row) => row.request_id === listed.headers.get('Request-Id'))).toBe(false);
  expect(JSON.stringify(all)).not.toMatch(/grace|hopper|nope|0100/i);

  // Filters: one record's history, one key's rows, one status.
  const history = await auditEvents(`&object_type=donor&object_id=${id}`);
  expect(history.length).toBeGreaterThanOrEqual(7);
  expect(history.every((row) => row.object_id === id)).toBe(true);
  expect((await auditEvents(`&api_key_id=${readOnly.id}`)).map((row) => row.status)).toEqual([403]);
  expect((await auditEvents('&status=401')).length).toBe(1);
  const missing = await service.call('GET', '/api/v1/audit-events?object_id=1');
  expect(missing.status).toBe(400);

  // A key without audit cannot read it; another institution sees none of it.
  expect((await service.call('GET', '/api/v1/audit-events', { key: readOnly.key })).status).toBe(
    403,
  );
  const other = await service.createTenant('Other University');
  const theirs = await service.call<{ data: AuditEvent[] }>('GET', '/api/v1/audit-events', {
    key: other.key,
  });
  expect(theirs.body.data).toEqual([]);
});
