import { sql } from 'slonik';
import { type ErrorEnvelope } from './helpers/threeWays.js';
import { ISO_MS } from './helpers/responses.js';
import {
  awardBody,
  awardRow,
  createAward,
  ids,
  newStudent,
  nextNumber,
  patchAward,
  service,
  setUpAwardTests,
  type Award,
} from './helpers/awards.js';

setUpAwardTests();

describe('award CRUD', () => {
  test('create answers 201 with Location and the full award, offered by default, and writes the row', async () => {
    const student = await newStudent();
    const response = await service.call<Award>('POST', '/api/v1/awards', {
      body: awardBody({ student_id: student, amount: 1234.5 }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('Location')).toBe(`/api/v1/awards/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'award',
      award_cycle_id: ids.openCycle,
      scholarship_id: ids.scholarship,
      student_id: student,
      amount: 1234.5,
      status: 'offered',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await awardRow(response.body.id)).toMatchObject({
      award_cycle_id: ids.openCycle,
      scholarship_id: ids.scholarship,
      student_id: student,
      amount: '1234.50',
      status: 'offered',
    });
  });

  test('an award may be made in a closed cycle, and status offered may be sent', async () => {
    const award = await createAward({ award_cycle_id: ids.closedCycle, status: 'offered' });
    expect(award).toMatchObject({ award_cycle_id: ids.closedCycle, status: 'offered' });
  });

  test('a dry-run create answers 201 with id 0 and the real body, without Location, a row or holding the place', async () => {
    const body = awardBody({ student_id: await newStudent(), amount: 99.99 });
    const before = await service.count('awards');
    const dry = await service.call<Award>('POST', '/api/v1/awards?dry_run=true', { body });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(dry.headers.get('Location')).toBeNull();
    expect(await service.count('awards')).toBe(before);

    const real = await service.call<Award>('POST', '/api/v1/awards', { body });
    expect(real.status).toBe(201);
    const strip = (award: Award) => ({
      ...award,
      id: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(strip(dry.body)).toEqual(strip(real.body));
  });

  test('retrieve returns the award as created', async () => {
    const award = await createAward({ amount: 0.01 });
    const fetched = await service.call<Award>('GET', `/api/v1/awards/${award.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(award);
  });

  test('PATCH merges the sent fields and stores the amount exactly', async () => {
    const award = await createAward();
    const patched = await patchAward(award.id, {
      amount: 3000.1,
      scholarship_id: ids.secondScholarship,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...award,
      amount: 3000.1,
      scholarship_id: ids.secondScholarship,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await awardRow(award.id)).toMatchObject({
      amount: '3000.10',
      scholarship_id: ids.secondScholarship,
      award_cycle_id: ids.openCycle,
    });
  });

  test('a dry-run PATCH returns the would-be award and changes nothing', async () => {
    const award = await createAward();
    const before = await awardRow(award.id);
    const dry = await service.call<Award>('PATCH', `/api/v1/awards/${award.id}`, {
      body: { status: 'accepted', amount: 10 },
      headers: { 'Dry-Run': 'true' },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...award,
      status: 'accepted',
      amount: 10,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await awardRow(award.id)).toEqual(before);
  });

  test('awards have no DELETE: 405 with an Allow header, and the award stays', async () => {
    const award = await createAward();
    const response = await service.call<ErrorEnvelope>('DELETE', `/api/v1/awards/${award.id}`);
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET, PATCH');
    expect(await awardRow(award.id)).not.toBeNull();
  });
});

describe('idempotency on award writes', () => {
  test('a create retried with the same key replays the first answer and writes one row', async () => {
    const body = awardBody({ student_id: await newStudent() });
    const headers = { 'Idempotency-Key': `award-${nextNumber()}` };
    const first = await service.call<Award>('POST', '/api/v1/awards', { body, headers });
    const again = await service.call<Award>('POST', '/api/v1/awards', { body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.headers.get('Location')).toBe(first.headers.get('Location'));
    const rows = await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM awards WHERE student_id = ${Number(body.student_id)}`,
    );
    expect(rows).toBe(1);
  });

  test('a dry run does not use up the key; a refused transition leaves it free', async () => {
    const award = await createAward();
    const headers = { 'Idempotency-Key': `transition-${nextNumber()}` };
    const refused = await service.call('PATCH', `/api/v1/awards/${award.id}`, {
      body: { status: 'disbursed' },
      headers,
    });
    expect(refused.status).toBe(409);
    const dry = await service.call('PATCH', `/api/v1/awards/${award.id}?dry_run=true`, {
      body: { status: 'accepted' },
      headers,
    });
    expect(dry.status).toBe(200);
    const real = await service.call<Award>('PATCH', `/api/v1/awards/${award.id}`, {
      body: { status: 'accepted' },
      headers,
    });
    expect(real.status).toBe(200);
    expect(real.headers.get('Idempotent-Replayed')).toBeNull();
    expect((await awardRow(award.id))?.status).toBe('accepted');
    const replay = await service.call<Award>('PATCH', `/api/v1/awards/${award.id}`, {
      body: { status: 'accepted' },
      headers,
    });
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.body).toEqual(real.body);
  });
});

describe('an award that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ["another institution's award", () => String(ids.otherAward)],
  ];
  const calls: Array<[string, string, Record<string, unknown> | undefined]> = [
    ['GET', '', undefined],
    ['PATCH', '', { status: 'cancelled' }],
    ['PATCH', '?dry_run=true', { status: 'cancelled' }],
  ];
  const table = unknownIds.flatMap(([what, id]) =>
    calls.map(
      ([method, query, body]) => [`${method}${query} of ${what}`, method, query, body, id] as const,
    ),
  );

  test.each(table)('%s answers 404 resource_not_found', async (_name, method, query, body, id) => {
    const response = await service.call<ErrorEnvelope>(method, `/api/v1/awards/${id()}${query}`, {
      body,
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's award is untouched", async () => {
    expect(await awardRow(ids.otherAward)).toMatchObject({ status: 'offered', amount: '10.00' });
  });
});
