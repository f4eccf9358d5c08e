// Donor imports and the people side (constituents.md §1, §3): contact points one cell per field
// (`emails.0.address`), and an Individual's household named by the household's external id.
import { readFile } from 'node:fs/promises';
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import { rowErrors, settled, upload } from './helpers/imports.js';

interface Donor {
  id: number;
  household_id: number | null;
  emails: { address: string; type: string; status: string }[];
  phones: { number: string; type: string; status: string }[];
  addresses: Record<string, string | null>[];
  mailing_address: Record<string, string | null> | null;
  member_ids?: number[];
}

let service: TestService;
let other: Tenant;

beforeAll(async () => {
  service = await startTestService({ IMPORT_CHUNK_ROWS: '2' });
  other = await service.createTenant('Other College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

const donorByEmail = async (email: string): Promise<Donor | null> => {
  const id = await service.db.maybeOneFirst(sql.unsafe`
    SELECT id FROM donors WHERE institution_id = ${service.tenant.institutionId} AND email = ${email}`);
  if (id === null) return null;
  const answer = await service.call<Donor>('GET', `/api/v1/donors/${Number(id)}`);
  expect(answer.status).toBe(200);
  return answer.body;
};

/** POST /donors, keyed: a donor without an email needs an Idempotency-Key. */
const createDonor = (body: Record<string, unknown>, key?: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/donors', {
      key,
      body,
      headers: { 'Idempotency-Key': `donor-${String(body.external_id)}` },
    }),
  );

const errorsOf = async (importId: number) =>
  (await rowErrors(service, importId)).map((row) => ({
    row: row.row,
    errors: row.errors.map(({ param, code }) => ({ param, code })),
  }));

const address = (fields: Record<string, string | null>) => ({
  line1: null,
  line2: null,
  city: null,
  region: null,
  postal_code: null,
  country: null,
  status: 'active',
  seasonal_from: null,
  seasonal_to: null,
  ...fields,
});

describe('contact points one cell per field', () => {
  const header = [
    'role,first_name,last_name,email',
    'emails.0.address,emails.0.type,emails.1.address,emails.1.type,emails.2.address,emails.2.type',
    'phones.0.number,phones.0.type,phones.0.status',
    'addresses.0.line1,addresses.0.city,addresses.0.country,addresses.0.type',
    'addresses.0.seasonal_from,addresses.0.seasonal_to',
  ].join(',');

  test('the cells of each N build element N, in N order; empty Ns are no element', async () => {
    const csv = [
      header,
      // Element 1 of emails left empty: the two filled ones are the list, in N order.
      'Individual,Ann,Cells,ann@example.org,ann.home@example.org,home,,,ann.work@example.org,work,555 0100,mobile,inactive,1 Palm Way,Naples,US,seasonal,11-01,03-31',
      // No contact point cell filled: no list sent, the defaults apply.
      'Individual,Ben,Bare,ben@example.org,,,,,,,,,,,,,,,',
    ].join('\n');
    const answer = await upload(service, 'resource=donors', csv);
    expect(answer.status).toBe(202);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 2,
      rows_failed: 0,
    });
    expect(await donorByEmail('ann@example.org')).toMatchObject({
      emails: [
        { address: 'ann.home@example.org', type: 'home', status: 'active' },
        { address: 'ann.work@example.org', type: 'work', status: 'active' },
      ],
      phones: [{ number: '555 0100', type: 'mobile', status: 'inactive' }],
      addresses: [
        address({
          line1: '1 Palm Way',
          city: 'Naples',
          country: 'US',
          type: 'seasonal',
          seasonal_from: '11-01',
          seasonal_to: '03-31',
        }),
      ],
    });
    expect(await donorByEmail('ben@example.org')).toMatchObject({
      emails: [],
      phones: [],
      addresses: [],
    });
  });

  test('a bad element fails its row on the columns it came from, and writes nothing of it', async () => {
    const csv = [
      header,
      // emails.2 is the list's second element: its errors name emails.2, the column.
      'Individual,Cy,Bad,cy@example.org,cy.home@example.org,home,,,not-an-email,private,,,,,,,,,',
      // A repeat of the primary, and a seasonal address without its window.
      'Individual,Di,Bad,di@example.org,DI@example.org,home,,,,,555 0101,,,2 Elm St,,,seasonal,,',
      'Individual,Ed,Good,ed@example.org,,,ed.work@example.org,work,,,,,,,,,,,',
    ].join('\n');
    const answer = await upload(service, 'resource=donors', csv);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 1,
      rows_failed: 2,
    });
    expect(await errorsOf(answer.body.id)).toEqual([
      {
        row: 2,
        errors: [
          { param: 'emails.2.address', code: 'invalid_format' },
          { param: 'emails.2.type', code: 'invalid_value' },
        ],
      },
      {
        row: 3,
        errors: [
          { param: 'phones.0.type', code: 'required' },
          { param: 'emails.0.address', code: 'already_in_use' },
          { param: 'addresses.0.seasonal_from', code: 'required' },
          { param: 'addresses.0.seasonal_to', code: 'required' },
        ],
      },
    ]);
    expect(await donorByEmail('cy@example.org')).toBeNull();
    expect(await donorByEmail('di@example.org')).toBeNull();
    expect((await donorByEmail('ed@example.org'))?.emails).toEqual([
      { address: 'ed.work@example.org', type: 'work', status: 'active' },
    ]);
    // errors.csv names the same columns.
    const download = await fetch(`${service.api.url}/api/v1/imports/${answer.body.id}/errors.csv`, {
      headers: { 'X-Service-API-Key': service.tenant.key },
    });
    expect(await download.text()).toContain(
      'emails.2.address: must be a valid email address (invalid_format)',
    );
  });

  test('the flattened row judges exactly as the JSON body it builds', async () => {
    const body = {
      role: 'Individual',
      first_name: 'Fay',
      last_name: 'Same',
      emails: [{ address: 'fay.home@example.org', type: 'home' }, { address: 'nope' }],
    };
    const single = await service.call<{ error: { errors: unknown[] } }>(
      'POST',
      '/api/v1/donors?dry_run=true',
      { body, headers: { 'Idempotency-Key': `same-${Date.now()}` } },
    );
    expect(single.status).toBe(422);
    const csv = [
      'role,first_name,last_name,emails.0.address,emails.0.type,emails.1.address,emails.1.type',
      'Individual,Fay,Same,fay.home@example.org,home,nope,',
    ].join('\n');
    const answer = await upload(service, 'resource=donors&dry_run=true', csv);
    await settled(service, answer.body.id);
    const [row] = await rowErrors(service, answer.body.id);
    expect(row!.errors).toEqual(single.body.error.errors);
  });

  test('a row filling a list both as a JSON cell and cell by cell fails on the JSON column; rows filling one form are written', async () => {
    const csv = [
      'role,first_name,last_name,email,emails,emails.0.address,emails.0.type,phones,phones.1.number,phones.1.type',
      // Both forms of emails: the row fails on `emails`, naming the cells.
      'Individual,Gil,Mixed,gil@example.org,"[{""address"":""gil.home@example.org"",""type"":""home""}]",gil.work@example.org,work,,,',
      // Only the JSON cell of emails, only the cells of phones.
      'Individual,Hana,Json,hana@example.org,"[{""address"":""hana.home@example.org"",""type"":""home""}]",,,,555 0102,mobile',
      // Only the cells of emails, only the JSON cell of phones.
      'Individual,Ivo,Cells,ivo@example.org,,ivo.work@example.org,work,"[{""number"":""555 0103"",""type"":""home""}]",,',
      // Both forms of phones, and the command still judges the rest of the row.
      'Individual,Jan,,jan@example.org,,,,"[{""number"":""555 0104"",""type"":""home""}]",555 0105,work',
    ].join('\n');
    const expected = [
      { row: 2, errors: [{ param: 'emails', code: 'not_allowed' }] },
      {
        row: 5,
        errors: [
          { param: 'phones', code: 'not_allowed' },
          { param: 'last_name', code: 'required' },
        ],
      },
    ];
    const dry = await upload(service, 'resource=donors&dry_run=true', csv);
    expect(dry.status).toBe(202);
    expect(await settled(service, dry.body.id)).toMatchObject({
      status: 'validated',
      rows_succeeded: 2,
      rows_failed: 2,
    });
    expect(await errorsOf(dry.body.id)).toEqual(expected);
    const [gil] = await rowErrors(service, dry.body.id);
    expect(gil!.errors[0]!.message).toBe(
      '"emails" (the list as a JSON cell) and "emails.0.address", "emails.0.type" (its elements cell by cell) both fill the list: fill one form or the other',
    );
    expect(await donorByEmail('hana@example.org')).toBeNull();

    // The commit does what the dry run said.
    const commit = await service.call('POST', `/api/v1/imports/${dry.body.id}/commit`, {
      body: {},
      headers: { 'Idempotency-Key': `commit-${dry.body.id}` },
    });
    expect(commit.status).toBe(200);
    expect(await settled(service, dry.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 2,
      rows_failed: 2,
    });
    expect(await errorsOf(dry.body.id)).toEqual(expected);
    expect(await donorByEmail('gil@example.org')).toBeNull();
    expect(await donorByEmail('jan@example.org')).toBeNull();
    expect(await donorByEmail('hana@example.org')).toMatchObject({
      emails: [{ address: 'hana.home@example.org', type: 'home', status: 'active' }],
      phones: [{ number: '555 0102', type: 'mobile', status: 'active' }],
    });
    expect(await donorByEmail('ivo@example.org')).toMatchObject({
      emails: [{ address: 'ivo.work@example.org', type: 'work', status: 'active' }],
      phones: [{ number: '555 0103', type: 'home', status: 'active' }],
    });
    const download = await fetch(`${service.api.url}/api/v1/imports/${dry.body.id}/errors.csv`, {
      headers: { 'X-Service-API-Key': service.tenant.key },
    });
    expect(await download.text()).toContain('fill one form or the other (not_allowed)');
  });

  test('an element past the list’s bound, or a field elements do not have, is an unknown column', async () => {
    const csv = [
      'role,first_name,last_name,emails.10.address,phones.0.extension',
      'Individual,Hal,Far,hal@example.org,12',
    ].join('\n');
    const answer = await upload(service, 'resource=donors', csv);
    expect(answer.status).toBe(422);
    const problems = (
      answer.body as unknown as {
        error: { errors: { param: string; code: string; message: string }[] };
      }
    ).error.errors;
    expect(problems.map(({ param, code }) => ({ param, code }))).toEqual([
      { param: 'columns.3', code: 'unknown_field' },
      { param: 'columns.4', code: 'unknown_field' },
    ]);
    expect(problems[0]!.message).toContain('emails.N.address');
    expect(problems[0]!.message).toContain('(N from 0 to 9)');
  });
});

describe('household_external_id', () => {
  let householdId: number;

  beforeAll(async () => {
    householdId = (await createDonor({ role: 'Household', last_name: 'Kaur', external_id: 'HH-1' }))
      .id;
    await createDonor(
      { role: 'Household', last_name: 'Theirs', external_id: 'HH-OTHER' },
      other.key,
    );
    await createDonor({ role: 'Organization', organization_name: 'Acme', external_id: 'ORG-1' });
  });

  test('names an existing household; the command’s errors on it are the column’s', async () => {
    const csv = [
      'role,first_name,last_name,organization_name,email,household_id,household_external_id',
      `Individual,Ira,Kaur,,ira@example.org,,HH-1`,
      `Individual,Jo,Kaur,,jo@example.org,${householdId},HH-1`,
      `Individual,Kim,Nowhere,,kim@example.org,,HH-OTHER`,
      `Individual,Lu,Acme,,lu@example.org,,ORG-1`,
      `Organization,,,Beta,beta@example.org,,HH-1`,
      `Individual,Vi,Nobody,,vi@example.org,,HH-NOWHERE`,
    ].join('\n');
    const dry = await upload(service, 'resource=donors&dry_run=true', csv);
    const validated = await settled(service, dry.body.id);
    expect(validated).toMatchObject({ status: 'validated', rows_succeeded: 1, rows_failed: 5 });
    const expected = [
      { row: 3, errors: [{ param: 'household_external_id', code: 'not_allowed' }] },
      { row: 4, errors: [{ param: 'household_external_id', code: 'reference_not_found' }] },
      { row: 5, errors: [{ param: 'household_external_id', code: 'invalid_value' }] },
      { row: 6, errors: [{ param: 'household_external_id', code: 'not_allowed' }] },
      { row: 7, errors: [{ param: 'household_external_id', code: 'reference_not_found' }] },
    ];
    expect(await errorsOf(dry.body.id)).toEqual(expected);
    expect(await donorByEmail('ira@example.org')).toBeNull();

    // The dry run predicts the commit: the same rows written, the same errors.
    const commit = await service.call('POST', `/api/v1/imports/${dry.body.id}/commit`, {
      body: {},
      headers: { 'Idempotency-Key': `commit-${dry.body.id}` },
    });
    expect(commit.status).toBe(200);
    expect(await settled(service, dry.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 1,
      rows_failed: 5,
    });
    expect(await errorsOf(dry.body.id)).toEqual(expected);
    expect((await donorByEmail('ira@example.org'))?.household_id).toBe(householdId);
    for (const email of ['jo', 'kim', 'lu', 'beta', 'vi'])
      expect(await donorByEmail(`${email}@example.org`)).toBeNull();
    const household = await service.call<{ member_ids: number[] }>(
      'GET',
      `/api/v1/donors/${householdId}`,
    );
    expect(household.body.member_ids).toHaveLength(1);
  });

  test('a Household row is found by the later rows of the same file, in its chunk or after', async () => {
    const csv = [
      'role,first_name,last_name,organization_name,email,external_id,household_external_id',
      // Chunks of 2 rows: rows 2–3, 4–5, 6–7, 8–9, 10–11, 12.
      'Household,,Moss,,,HH-MOSS,',
      'Individual,Max,Moss,,max@example.org,,HH-MOSS',
      'Individual,Mia,Moss,,mia@example.org,,HH-MOSS',
      // A household with errors: the row joining it is refused too, and says why.
      'Household,,,,,HH-BAD,',
      'Individual,Bo,Bad,,bo@example.org,,HH-BAD',
      // A household row after the row naming it is not found by that row.
      'Individual,Eve,Early,,eve@example.org,,HH-LATE',
      'Household,,Late,,,HH-LATE,',
      // Judged against the household as it will be: only an Individual joins one.
      'Organization,,,Moss Ltd,ltd@example.org,,HH-MOSS',
      'Individual,Ray,Moss,,ray@example.org,,HH-MOSS',
      // A donor of the file that is no household is refused as an existing one is.
      'Organization,,,Moss Trading,,ORG-MOSS,',
      'Individual,Sid,Moss,,sid@example.org,,ORG-MOSS',
    ].join('\n');
    const expected = [
      { row: 5, errors: [{ param: 'last_name', code: 'required' }] },
      { row: 6, errors: [{ param: 'household_external_id', code: 'reference_not_found' }] },
      { row: 7, errors: [{ param: 'household_external_id', code: 'reference_not_found' }] },
      { row: 9, errors: [{ param: 'household_external_id', code: 'not_allowed' }] },
      { row: 12, errors: [{ param: 'household_external_id', code: 'invalid_value' }] },
    ];
    const dry = await upload(service, 'resource=donors&dry_run=true', csv);
    expect(await settled(service, dry.body.id)).toMatchObject({
      status: 'validated',
      rows_succeeded: 6,
      rows_failed: 5,
    });
    expect(await errorsOf(dry.body.id)).toEqual(expected);
    const judged = await rowErrors(service, dry.body.id);
    expect(judged[1]!.errors[0]!.message).toBe(
      'names the household of row 5 of this file, which has errors: it is not imported',
    );
    // The judgement's stand-in household is gone with it.
    expect(
      await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM donors WHERE external_id IN ('HH-MOSS', 'HH-LATE', 'ORG-MOSS')`),
    ).toBe(0);

    const commit = await service.call('POST', `/api/v1/imports/${dry.body.id}/commit`, {
      body: {},
      headers: { 'Idempotency-Key': `commit-${dry.body.id}` },
    });
    expect(commit.status).toBe(200);
    expect(await settled(service, dry.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 6,
      rows_failed: 5,
    });
    expect(await errorsOf(dry.body.id)).toEqual(expected);
    const moss = Number(
      await service.db.oneFirst(sql.unsafe`SELECT id FROM donors WHERE external_id = 'HH-MOSS'`),
    );
    const members = await Promise.all(
      ['max', 'mia', 'ray'].map((name) => donorByEmail(`${name}@example.org`)),
    );
    expect(members.map((member) => member?.household_id)).toEqual([moss, moss, moss]);
    const household = await service.call<{ member_ids: number[] }>('GET', `/api/v1/donors/${moss}`);
    expect(household.body.member_ids).toEqual(members.map((member) => member!.id));
    for (const name of ['bo', 'eve', 'ltd', 'sid'])
      expect(await donorByEmail(`${name}@example.org`)).toBeNull();
    // One donor.created per donor written, the stand-ins none.
    expect(
      await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM events
      WHERE type = 'donor.created' AND request_id = (SELECT request_id FROM imports WHERE id = ${dry.body.id})`),
    ).toBe(6);
  });

  test('JSON rows take it too (a household of the same file included); another institution’s external id finds nothing', async () => {
    const answer = await upload(service, 'resource=donors', {
      rows: [
        {
          role: 'Individual',
          first_name: 'Ned',
          last_name: 'Kaur',
          email: 'ned@example.org',
          household_external_id: 'HH-1',
        },
        {
          role: 'Individual',
          first_name: 'Oz',
          last_name: 'Far',
          email: 'oz@example.org',
          household_external_id: 'HH-OTHER',
        },
        {
          role: 'Individual',
          first_name: 'Pat',
          last_name: 'Both',
          email: 'pat@example.org',
          household_id: householdId,
          household_external_id: 'HH-1',
        },
        { role: 'Household', last_name: 'Jay', external_id: 'HH-JSON' },
        {
          role: 'Individual',
          first_name: 'Una',
          last_name: 'Jay',
          email: 'una@example.org',
          household_external_id: 'HH-JSON',
        },
      ],
    });
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 3,
      rows_failed: 2,
    });
    expect(await rowErrors(service, answer.body.id)).toEqual([
      {
        object: 'import_row_error',
        row: 3,
        errors: [
          {
            param: 'household_external_id',
            code: 'reference_not_found',
            message: 'does not name an existing donor',
          },
        ],
      },
      {
        object: 'import_row_error',
        row: 4,
        errors: [
          {
            param: 'household_external_id',
            code: 'not_allowed',
            message: 'name the household once: by household_id or household_external_id',
          },
        ],
      },
    ]);
    const jay = await service.db.oneFirst(sql.unsafe`
      SELECT id FROM donors WHERE external_id = 'HH-JSON'`);
    expect((await donorByEmail('una@example.org'))?.household_id).toBe(Number(jay));
    expect((await donorByEmail('ned@example.org'))?.household_id).toBe(householdId);
    // The other institution's household gained no member.
    expect(
      await service.db.oneFirst(sql.unsafe`
        SELECT count(*)::int FROM donors WHERE institution_id = ${other.institutionId}
          AND household_id IS NOT NULL`),
    ).toBe(0);
  });

  test('a household whose external id changes between the dry run and the commit: the row fails, and nothing of it is written', async () => {
    const household = await createDonor({
      role: 'Household',
      last_name: 'Race',
      external_id: 'HH-RACE',
    });
    const csv = [
      'role,first_name,last_name,email,household_external_id',
      'Individual,Rae,Race,rae@example.org,HH-RACE',
    ].join('\n');
    const dry = await upload(service, 'resource=donors&dry_run=true', csv);
    expect(await settled(service, dry.body.id)).toMatchObject({
      status: 'validated',
      rows_succeeded: 1,
    });
    const renamed = await service.call('PATCH', `/api/v1/donors/${household.id}`, {
      body: { external_id: 'HH-RACE-2' },
      headers: { 'Idempotency-Key': 'rename-hh-race' },
    });
    expect(renamed.status).toBe(200);
    const commit = await service.call('POST', `/api/v1/imports/${dry.body.id}/commit`, {
      body: {},
      headers: { 'Idempotency-Key': `commit-${dry.body.id}` },
    });
    expect(commit.status).toBe(200);
    expect(await settled(service, dry.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 0,
      rows_failed: 1,
    });
    expect(await errorsOf(dry.body.id)).toEqual([
      { row: 2, errors: [{ param: 'household_external_id', code: 'reference_not_found' }] },
    ]);
    expect(await donorByEmail('rae@example.org')).toBeNull();
    expect(
      await service.db.oneFirst(sql.unsafe`
        SELECT count(*)::int FROM events
        WHERE request_id = (SELECT request_id FROM imports WHERE id = ${dry.body.id})
          AND type = 'donor.created'`),
    ).toBe(0);
  });

  test('on_match skip: a household row of the file that matches an existing donor by email stands for it, and its members join it', async () => {
    const existing = await createDonor({
      role: 'Household',
      last_name: 'Skipper',
      email: 'skippers@example.org',
      external_id: 'HH-SKIPPER-OLD',
    });
    const csv = [
      'role,first_name,last_name,email,external_id,household_external_id',
      'Household,,Skipper,SKIPPERS@example.org,HH-SKIPPER,',
      'Individual,Sam,Skipper,sam.skipper@example.org,,HH-SKIPPER',
    ].join('\n');
    const dry = await upload(service, 'resource=donors&on_match=skip&dry_run=true', csv);
    const judged = { rows_succeeded: 1, rows_failed: 0, rows_skipped: 1 };
    expect(await settled(service, dry.body.id)).toMatchObject({ status: 'validated', ...judged });
    const commit = await service.call('POST', `/api/v1/imports/${dry.body.id}/commit`, {
      body: {},
      headers: { 'Idempotency-Key': `commit-${dry.body.id}` },
    });
    expect(commit.status).toBe(200);
    expect(await settled(service, dry.body.id)).toMatchObject({ status: 'completed', ...judged });
    expect((await donorByEmail('sam.skipper@example.org'))?.household_id).toBe(existing.id);
  });

  test('on_match update joins an existing donor to its household', async () => {
    await createDonor({
      role: 'Individual',
      first_name: 'Quin',
      last_name: 'Kaur',
      external_id: 'P-9',
    });
    const csv = [
      'external_id,role,first_name,last_name,household_external_id',
      'P-9,Individual,Quin,Kaur,HH-1',
    ].join('\n');
    const answer = await upload(service, 'resource=donors&on_match=update', csv);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 1,
    });
    const quin = await service.db.oneFirst(sql.unsafe`
      SELECT household_id FROM donors WHERE external_id = 'P-9'`);
    expect(Number(quin)).toBe(householdId);
  });
});

test('the example files of docs/imports.md import as the document says', async () => {
  const document = await readFile('docs/imports.md', 'utf8');
  const examples = [...document.matchAll(/```csv\n([\s\S]*?)```/g)].map((match) => match[1]!);
  expect(examples).toHaveLength(2);
  const [contactPoints, household] = examples as [string, string];

  const first = await upload(service, 'resource=donors', contactPoints);
  expect(await settled(service, first.body.id)).toMatchObject({
    status: 'completed',
    rows_succeeded: 2,
    rows_failed: 0,
  });
  expect(await donorByEmail('margaret.chen@example.org')).toMatchObject({
    emails: [{ address: 'm.chen@work.example.com', type: 'work', status: 'active' }],
    phones: [{ number: '+1 617 555 0142', type: 'mobile', status: 'active' }],
    addresses: [expect.objectContaining({ city: 'Naples', seasonal_from: '11-01' })],
  });
  // Robert fills emails.1 only: his one listed email, the gap closed.
  expect((await donorByEmail('r.alvarez@example.com'))?.emails).toEqual([
    { address: 'bob@home.example.com', type: 'home', status: 'active' },
  ]);

  const second = await upload(service, 'resource=donors', household);
  expect(await settled(service, second.body.id)).toMatchObject({
    status: 'completed',
    rows_succeeded: 3,
    rows_failed: 0,
  });
  const okafor = await donorByEmail('okafor.family@example.net');
  expect(okafor?.member_ids).toEqual([
    (await donorByEmail('samuel.okafor@example.net'))!.id,
    (await donorByEmail('ruth.okafor@example.net'))!.id,
  ]);
});
