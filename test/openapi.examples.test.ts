// The document's request bodies: every write's example succeeds as sent (as a dry run), and
// what the document says clears a field (null or blank text) is what the service accepts.
import ajv2020 from 'ajv/dist/2020.js';
import { sql } from 'slonik';
import { routeTable } from '../api/routes.js';
import { buildOpenApiDocument, pathTemplate } from '../common/openapi/document.js';
import { importCommands } from '../common/imports/commands.js';
import { resources } from '../common/resources/index.js';
import { settled, upload } from './helpers/imports.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';

type Json = Record<string, unknown>;
const document = buildOpenApiDocument(routeTable());
const Ajv2020 = ajv2020.default;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema({ ...document, $id: 'doc' });
const bodySchema = (name: string) => ajv.compile({ $ref: `doc#/components/schemas/${name}` });

let service: TestService;

/** Records with id 1 of every kind (and 2 of donors and funds), as the examples assume (ids start at 1 in a new database). */
beforeAll(async () => {
  service = await startTestService();
  const post = (path: string, body: Json) =>
    created<{ id: number }>(service.call('POST', path, { body }));
  await post('/api/v1/users', {
    email: 'officer@example.org',
    first_name: 'Olive',
    last_name: 'Officer',
  });
  await post('/api/v1/donors', {
    role: 'Household',
    last_name: 'Example',
    email: 'home@example.org',
  });
  // A second donor and fund: the gift example splits and soft-credits; the merge example merges
  // donor 2 into donor 1, so the two are of one role class (as donors 1 and 2 of the demo are).
  await post('/api/v1/donors', {
    role: 'Household',
    last_name: 'Sample',
    email: 'sam@example.org',
  });
  await post('/api/v1/relationships', { donor_id: 2, related_donor_id: 1, type: 'other' });
  // Donor 2's namesake: duplicate pair 1, for the dismiss example.
  await post('/api/v1/donors', {
    role: 'Household',
    last_name: 'Sample',
    email: 'sample.household@example.org',
  });
  await post('/api/v1/funds', { name: 'General fund', code: 'GENERAL', award_limit: 100000 });
  await post('/api/v1/funds', { name: 'Scholarship fund', code: 'SCHOLAR' });
  await post('/api/v1/gifts', {
    donor_id: 1,
    amount: 10,
    subject: 'First gift',
    gift_date: '2026-01-01',
    // Its acknowledgement is pending, for the tribute-acknowledgement example.
    tribute: {
      type: 'in_honor_of',
      honoree_name: 'Ada Example',
      notify: { name: 'Ada Example', email: 'ada@example.org' },
    },
  });
  // Receipt 1 is of gift 2, so that gift 1 is free for the receipt example (as in the demo).
  await post('/api/v1/gifts', {
    donor_id: 1,
    amount: 20,
    subject: 'Second gift',
    gift_date: '2026-01-02',
  });
  await post('/api/v1/receipts', { gift_id: 2 });
  await post('/api/v1/webhook-endpoints', {
    url: 'https://hooks.example.org/donor-gift-service',
    enabled_events: ['gift.*'],
  });
  await post('/api/v1/award-cycles', {
    name: 'Current awards',
    starts_on: '2026-01-01',
    ends_on: '2026-12-31',
    status: 'open',
  });
  await post('/api/v1/students', { student_number: 'S-1', first_name: 'Sam', last_name: 'One' });
  await post('/api/v1/students', { student_number: 'S-2', first_name: 'Sue', last_name: 'Two' });
  await post('/api/v1/scholarships', { name: 'General scholarship', fund_id: 1 });
  await post('/api/v1/awards', {
    award_cycle_id: 1,
    scholarship_id: 1,
    student_id: 2,
    amount: 5000,
  });
  await post('/api/v1/tags', { name: 'First tag' });
  await post('/api/v1/campaigns', { name: 'Annual Fund 2026', code: 'AF26' });
  await post('/api/v1/appeals', { name: 'Year-end letter', code: 'AF26-MAIL', channel: 'mail' });
  // Import 1, a validated dry run: the commit and cancel examples act on it.
  const imported = await upload(service, 'resource=donors&dry_run=true', {
    rows: [{ role: 'Household', last_name: 'Imported', email: 'imported@example.org' }],
  });
  await settled(service, imported.body.id);
  await post('/api/v1/recurring-gifts', {
    donor_id: 1,
    amount: 25,
    frequency: 'monthly',
    start_on: '2026-01-31',
    fund_id: 1,
  });
  // Pledge 1: open with nothing paid, so that it can be written off, cancelled and changed.
  await post('/api/v1/pledges', {
    donor_id: 1,
    amount: 1200,
    pledge_date: '2026-01-01',
    fund_id: 1,
    schedule: { frequency: 'monthly', installments: 12, first_due_on: '2026-01-31' },
  });
  const ids = await service.db.anyFirst(sql.unsafe`
    SELECT min(id) FROM (SELECT id FROM users UNION ALL SELECT id FROM donors UNION ALL SELECT id FROM funds
      UNION ALL SELECT id FROM gifts UNION ALL SELECT id FROM award_cycles UNION ALL SELECT id FROM students
      UNION ALL SELECT id FROM scholarships UNION ALL SELECT id FROM awards UNION ALL SELECT id FROM tags
      UNION ALL SELECT id FROM receipts UNION ALL SELECT id FROM recurring_gifts
      UNION ALL SELECT id FROM pledges UNION ALL SELECT id FROM campaigns
      UNION ALL SELECT id FROM appeals) t`);
  expect(ids).toEqual([1]);
});

afterAll(async () => {
  await service?.close();
});

const writes = Object.entries(document.paths).flatMap(([template, item]) =>
  Object.entries(item)
    .filter(
      ([method, operation]) =>
        ['post', 'patch'].includes(method) &&
        (operation as Json).requestBody &&
        // Resending a webhook delivery changes no record: it has no dry run to try.
        (operation as Json).operationId !== 'retryWebhookDelivery',
    )
    .map(([method, operation]) => {
      const content = ((operation as Json).requestBody as Json).content as Record<string, Json>;
      const media = content['application/json']!;
      return {
        method: method.toUpperCase(),
        template,
        example: media.example as Json,
        ref: (media.schema as Json).$ref as string,
        // 201 for a create, 200 for an update or an action: the status the document promises.
        status: Number(
          Object.keys((operation as Json).responses as Json).find((code) => code.startsWith('2')),
        ),
      };
    }),
);

test('every write operation has a request-body example', () => {
  const withBodies = resources.flatMap((resource) => [
    ...(['create', 'update'] as const).filter((write) => resource.commands[write]),
    ...(resource.actions ?? []).map((action) => action.name),
    ...(resource.children ?? []).map((child) => child.name),
  ]);
  // Neither are imports (common/imports: their create, commit and cancel), the institution's
  // settings (PATCH /institution) nor the API keys' create and roll (common/apiKeys).
  expect(writes.length).toBe(withBodies.length + importCommands.length + 1 + 2);
  for (const write of writes) expect(write.example).toEqual(expect.any(Object));
});

test.each(writes)(
  '$method $template: its example fits its schema and succeeds as a dry run',
  async (write) => {
    const validate = bodySchema(write.ref.split('/').at(-1)!);
    expect(validate(write.example) ? null : validate.errors).toBeNull();
    // Donor 1 holds the open pledge and active recurring gift the other examples act on, which
    // an erasure refuses: the erasure example erases donor 3, which has neither. An API key's id
    // is text: the example rolls the tenant's own key (a dry run changes nothing).
    const id = write.template.startsWith('/api/v1/api-keys/')
      ? service.tenant.apiKeyId
      : write.template.endsWith('/erase')
        ? '3'
        : '1';
    const path = write.template.replace('{id}', id);
    // An import's upload names the resource of its rows in the query string.
    const query = write.template === '/api/v1/imports' ? '&resource=donors' : '';
    const response = await service.call(write.method, `${path}?dry_run=true${query}`, {
      body: write.example,
    });
    expect({ status: response.status, body: response.status < 300 ? null : response.body }).toEqual(
      {
        status: write.status,
        body: null,
      },
    );
  },
);

test('report filters the first request must send are required parameters', () => {
  const awarded = document.paths[pathTemplate('/scholarships/awarded-students')]!.get as Json;
  const cycle = (awarded.parameters as Json[]).find(
    (parameter) => parameter.name === 'award_cycle_id',
  )!;
  expect(cycle.required).toBe(true);
});

test('request bodies carry no `default` (said in words instead), so no client must send a defaulted field', () => {
  const bodies = Object.entries(document.components.schemas).filter(([name]) =>
    /(Create|Update)$/.test(name),
  );
  for (const [, schema] of bodies) expect(JSON.stringify(schema)).not.toContain('"default"');
  const giftType = (document.components.schemas.GiftCreate!.properties as Record<string, Json>)
    .type!;
  expect(giftType.description).toContain('Default: `"cash"`');
});

const nullableFields = resources.flatMap((resource) =>
  Object.entries(resource.shape)
    .filter(([, field]) => field.nullable)
    // A resource without update (exchange rates) has its create body checked: its example
    // gives the fields that body requires.
    .map(([field]) =>
      resource.commands.update
        ? { component: `${resource.text.component}Update`, field, rest: {} }
        : {
            component: `${resource.text.component}Create`,
            field,
            rest: resource.text.examples.create,
          },
    ),
);

test.each(nullableFields)(
  '$component.$field: the schema takes null and blank text, as the service does',
  ({ component, field, rest }) => {
    const validate = bodySchema(component);
    expect(validate({ ...rest, [field]: null })).toBe(true);
    expect(validate({ ...rest, [field]: '' })).toBe(true);
    expect(validate({ ...rest, [field]: '  ' })).toBe(true);
  },
);

test.each([
  [
    '/api/v1/donors',
    'assigned_user_id',
    {
      role: 'Individual',
      first_name: 'A',
      last_name: 'B',
      email: 'clear1@example.org',
      assigned_user_id: 1,
    },
  ],
  [
    '/api/v1/donors',
    'address',
    {
      role: 'Individual',
      first_name: 'A',
      last_name: 'B',
      email: 'clear2@example.org',
      address: { city: 'Leeds' },
    },
  ],
  ['/api/v1/funds', 'award_limit', { name: 'Clearable', code: 'CLEAR', award_limit: 10 }],
  [
    '/api/v1/gifts',
    'check_number',
    {
      donor_id: 1,
      amount: 5,
      subject: 'S',
      gift_date: '2026-02-02',
      type: 'check',
      check_number: '7',
    },
  ],
])(
  '%s: an empty string clears %s, in the answer and in the database',
  async (path, field, body) => {
    const record = await created<{ id: number } & Json>(service.call('POST', path, { body }));
    expect(record[field]).not.toBeNull();
    const response = await service.call<Json>('PATCH', `${path}/${record.id}`, {
      body: { [field]: '' },
    });
    expect(response.status).toBe(200);
    expect(response.body[field]).toBeNull();
    const table = path.split('/').at(-1)!;
    const stored = await service.db.oneFirst(
      sql.unsafe`SELECT ${sql.identifier([field])} IS NULL FROM ${sql.identifier([table])} WHERE id = ${record.id}`,
    );
    expect(stored).toBe(true);
  },
);

test('the document says what a dry run does not predict: a used Idempotency-Key', () => {
  const intro = document.info.description as string;
  expect(intro).toContain('predicts the real call as the first use of its `Idempotency-Key`');
  expect(intro).toContain('422 `idempotency_key_request_mismatch`');
});
