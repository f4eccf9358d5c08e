// Duplicate detection (constituents.md §5, matching): the one rule and its scores, kept current
// by every donor write in its own transaction, the two lists, and dismissing a pair.
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';

interface Candidate {
  object: string;
  donor_id: number;
  pair_id: number;
  score: number;
  matched_on: string[];
}

interface Pair {
  id: number;
  object: string;
  donor_id: number;
  other_donor_id: number;
  score: number;
  matched_on: string[];
  dismissed_at: string | null;
  dismiss_reason: string | null;
  created_at: string;
  updated_at: string;
}

interface Page<T> {
  object: string;
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

let service: TestService;
let other: Tenant;
let counter = 0;

/** A name no other test uses, so that each test's donors match only each other. */
const unique = (stem: string) => `${stem}${String.fromCharCode(97 + (++counter % 26))}${counter}`;

async function donor(body: Record<string, unknown>, key?: string): Promise<number> {
  // A donor without an email needs a key: every create here is a new donor.
  const headers = { 'Idempotency-Key': `duplicates-donor-${++counter}` };
  const response = service.call<{ id: number }>('POST', '/api/v1/donors', { key, body, headers });
  return (await created(response)).id;
}

const individual = (first: string, last: string, rest: Record<string, unknown> = {}) =>
  donor({ role: 'Individual', first_name: first, last_name: last, ...rest });

async function candidatesOf(id: number, key?: string): Promise<Candidate[]> {
  const page = await service.call<Page<Candidate>>('GET', `/api/v1/donors/${id}/duplicates`, {
    key,
  });
  expect(page.status).toBe(200);
  return page.body.data;
}

/** Every open pair of the institution, walking the cursor to the end. */
async function allPairs(query = '', key?: string): Promise<Pair[]> {
  const pairs: Pair[] = [];
  let url: string | null = `/api/v1/duplicates?limit=100${query}`;
  while (url) {
    const page: { status: number; body: Page<Pair> } = await service.call<Page<Pair>>('GET', url, {
      key,
    });
    expect(page.status).toBe(200);
    pairs.push(...page.body.data);
    url = page.body.next_cursor
      ? `/api/v1/duplicates?limit=100&starting_after=${page.body.next_cursor}`
      : null;
  }
  return pairs;
}

const pairOf = async (a: number, b: number) =>
  (await allPairs()).find(
    (pair) => pair.donor_id === Math.min(a, b) && pair.other_donor_id === Math.max(a, b),
  );

const pairRows = () =>
  service.db.any(sql.unsafe`
    SELECT id, donor_id, other_donor_id, score::int, matched_on, dismissed_at, dismiss_reason
    FROM duplicate_pairs ORDER BY id`);

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

describe('the matching rule', () => {
  test('an email in common, primary or listed, in any case, is 100; the pair reads the same from both sides and in GET /duplicates', async () => {
    const email = `${unique('shared')}@example.org`;
    const a = await individual(unique('Ann'), unique('Ames'), { email });
    const b = await individual(unique('Bea'), unique('Bell'), {
      emails: [{ address: `  ${email.toUpperCase()}`, type: 'work' }],
    });
    const [fromA] = await candidatesOf(a);
    expect(fromA).toEqual({
      object: 'duplicate_candidate',
      donor_id: b,
      pair_id: expect.any(Number),
      score: 100,
      matched_on: ['email'],
    });
    expect(await candidatesOf(b)).toEqual([{ ...fromA, donor_id: a }]);
    const pair = await service.call<Pair>('GET', `/api/v1/duplicates/${fromA!.pair_id}`);
    expect(pair.status).toBe(200);
    expect(pair.body).toEqual({
      id: fromA!.pair_id,
      object: 'duplicate_pair',
      donor_id: a,
      other_donor_id: b,
      score: 100,
      matched_on: ['email'],
      dismissed_at: null,
      dismiss_reason: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await pairOf(a, b)).toEqual(pair.body);
  });

  test('the same name and a phone in common (by its digits) is 80', async () => {
    const [first, last] = [unique('Carl'), unique('Cole')];
    const a = await individual(first, last, { phone: '(555) 010-7788' });
    const b = await individual(first, last, {
      phones: [{ number: '555.010.7788', type: 'mobile' }],
    });
    expect(await candidatesOf(a)).toEqual([
      expect.objectContaining({ donor_id: b, score: 80, matched_on: ['name', 'phone'] }),
    ]);
  });

  test('the same name and a postal code in common (letters and digits, any case) is 80', async () => {
    const [first, last] = [unique('Dora'), unique('Dunn')];
    const a = await individual(first, last, {
      address: { postal_code: 'SW1A 1AA', country: 'GB' },
    });
    const b = await individual(first, last, {
      addresses: [
        { postal_code: 'sw1a-1aa', type: 'seasonal', seasonal_from: '11-01', seasonal_to: '03-31' },
      ],
    });
    expect(await candidatesOf(b)).toEqual([
      expect.objectContaining({ donor_id: a, score: 80, matched_on: ['name', 'postal_code'] }),
    ]);
  });

  test('the same name alone is 50, with accents, case and spaces ignored; a phone or postal code without the name is nothing', async () => {
    const last = unique('Ångström');
    const a = await individual('Zoë', last, {
      phone: '555 0101',
      address: { postal_code: '10115' },
    });
    const b = await individual('  ZOE ', `  ${last.normalize('NFD').toLowerCase()}  `);
    const c = await individual(unique('Yves'), unique('Young'), {
      phone: '5550101',
      address: { postal_code: '10115' },
    });
    expect(await candidatesOf(a)).toEqual([
      expect.objectContaining({ donor_id: b, score: 50, matched_on: ['name'] }),
    ]);
    expect(await candidatesOf(c)).toEqual([]);
  });

  test('matched_on lists every basis that holds; the score is the strongest one', async () => {
    const [first, last] = [unique('Eve'), unique('Eng')];
    const email = `${unique('eve')}@example.org`;
    const a = await individual(first, last, {
      email,
      phone: '555 0199',
      address: { postal_code: '02139' },
    });
    const b = await individual(first, last, {
      emails: [{ address: email, type: 'home', status: 'bounced' }],
      phone: '+5550199',
      address: { postal_code: '02139' },
    });
    expect(await candidatesOf(a)).toEqual([
      expect.objectContaining({
        donor_id: b,
        score: 100,
        matched_on: ['email', 'name', 'phone', 'postal_code'],
      }),
    ]);
  });

  test('a donor’s candidates are listed highest score first', async () => {
    const [first, last] = [unique('Fay'), unique('Fox')];
    const email = `${unique('fay')}@example.org`;
    const a = await individual(first, last, { email, phone: '555 0111' });
    const byName = await individual(first, last);
    const byPhone = await individual(first, last, { phone: '5550111' });
    const byEmail = await individual(unique('Gil'), unique('Gray'), {
      emails: [{ address: email, type: 'other' }],
    });
    expect((await candidatesOf(a)).map(({ donor_id, score }) => [donor_id, score])).toEqual([
      [byEmail, 100],
      [byPhone, 80],
      [byName, 50],
    ]);
  });

  test('role classes are kept apart: households with households, organization roles together', async () => {
    const family = unique('Okafor');
    const email = `${unique('home')}@example.org`;
    const house = await donor({ role: 'Household', last_name: family, email });
    const sameHouse = await donor({ role: 'Household', last_name: family.toUpperCase() });
    const person = await individual('Ngozi', family, {
      emails: [{ address: email, type: 'home' }],
    });
    const company = unique('Acme Works');
    const organization = await donor({ role: 'Organization', organization_name: company });
    const foundation = await donor({
      role: 'Foundation',
      organization_name: ` ${company.toLowerCase()} `,
    });
    const namesake = await individual(company, company);

    expect(await candidatesOf(house)).toEqual([
      expect.objectContaining({ donor_id: sameHouse, score: 50, matched_on: ['name'] }),
    ]);
    expect(await candidatesOf(person)).toEqual([]);
    expect(await candidatesOf(organization)).toEqual([
      expect.objectContaining({ donor_id: foundation, score: 50, matched_on: ['name'] }),
    ]);
    expect(await candidatesOf(namesake)).toEqual([]);
  });

  test('another institution’s donors are never candidates, and its donor’s list is 404', async () => {
    const [first, last] = [unique('Hal'), unique('Hunt')];
    const email = `${unique('hal')}@example.org`;
    const mine = await individual(first, last, { email });
    const theirs = await donor(
      { role: 'Individual', first_name: first, last_name: last, email },
      other.key,
    );
    expect(await candidatesOf(mine)).toEqual([]);
    expect(await candidatesOf(theirs, other.key)).toEqual([]);
    const foreign = await service.call('GET', `/api/v1/donors/${theirs}/duplicates`);
    const missing = await service.call('GET', '/api/v1/donors/99999999/duplicates');
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.body.error).toEqual({
      ...(missing.body.error as object),
      request_id: expect.any(String),
    });
  });
});

describe('kept current by the writes themselves', () => {
  test('an update that makes a match shows in the next read, and one that breaks it removes the pair', async () => {
    const a = await individual(unique('Ida'), unique('Irwin'), {
      email: `${unique('ida')}@example.org`,
    });
    const b = await individual(unique('Jo'), unique('Jones'));
    expect(await candidatesOf(a)).toEqual([]);

    const email = (await service.call<{ email: string }>('GET', `/api/v1/donors/${a}`)).body.email;
    const made = await service.call('PATCH', `/api/v1/donors/${b}`, {
      body: { emails: [{ address: email, type: 'home' }] },
    });
    expect(made.status).toBe(200);
    const [candidate] = await candidatesOf(a);
    expect(candidate).toEqual(expect.objectContaining({ donor_id: b, score: 100 }));
    expect(await pairOf(a, b)).toEqual(expect.objectContaining({ id: candidate!.pair_id }));

    // A change that keeps the match keeps the pair and its id, with the new score.
    const names = (
      await service.call<{ first_name: string; last_name: string }>('GET', `/api/v1/donors/${a}`)
    ).body;
    await service.call('PATCH', `/api/v1/donors/${b}`, {
      body: { first_name: names.first_name, last_name: names.last_name },
    });
    expect(await candidatesOf(a)).toEqual([{ ...candidate, matched_on: ['email', 'name'] }]);

    const broken = await service.call('PATCH', `/api/v1/donors/${b}`, {
      body: { emails: [], first_name: unique('Kim') },
    });
    expect(broken.status).toBe(200);
    expect(await candidatesOf(a)).toEqual([]);
    expect(await pairOf(a, b)).toBeUndefined();
    expect(
      (await pairRows()).filter((row) => (row as { id: number }).id === candidate!.pair_id),
    ).toEqual([]);
  });

  test('deleting a donor takes its pairs with it', async () => {
    const [first, last] = [unique('Lea'), unique('Lund')];
    const a = await individual(first, last);
    const b = await individual(first, last);
    const c = await individual(first, last);
    expect((await candidatesOf(a)).map((row) => row.donor_id).sort()).toEqual([b, c].sort());
    expect((await service.call('DELETE', `/api/v1/donors/${b}`)).status).toBe(200);
    expect((await candidatesOf(a)).map((row) => row.donor_id)).toEqual([c]);
    expect(await pairOf(a, b)).toBeUndefined();
    expect(await pairOf(b, c)).toBeUndefined();
    expect(
      await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM donor_match_keys WHERE donor_id = ${b}`),
    ).toBe(0);
  });

  test('a merge takes the merged donor out of every pair: the tombstone is no candidate', async () => {
    const [first, last] = [unique('Mia'), unique('Moss')];
    const a = await individual(first, last);
    const b = await individual(first, last);
    const c = await individual(first, last);
    expect(await pairOf(a, b)).toBeDefined();
    const merged = await service.call('POST', `/api/v1/donors/${a}/merge`, {
      body: { source_id: b },
      headers: { 'Idempotency-Key': `duplicates-merge-${++counter}` },
    });
    expect(merged.status).toBe(200);
    expect((await candidatesOf(a)).map((row) => row.donor_id)).toEqual([c]);
    expect(await pairOf(a, b)).toBeUndefined();
    expect(await pairOf(b, c)).toBeUndefined();
    expect(
      await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM donor_match_keys WHERE donor_id = ${b}`),
    ).toBe(0);
  });

  test('a dry-run donor write changes no pair', async () => {
    const [first, last] = [unique('Max'), unique('Moss')];
    const a = await individual(first, last);
    const before = await pairRows();
    const dry = await service.call('POST', '/api/v1/donors?dry_run=true', {
      headers: { 'Idempotency-Key': `duplicates-dry-${++counter}` },
      body: { role: 'Individual', first_name: first, last_name: last },
    });
    expect(dry.status).toBe(201);
    expect(await pairRows()).toEqual(before);
    expect(await candidatesOf(a)).toEqual([]);
  });
});

describe('GET /duplicates', () => {
  test('lists pairs lower donor id first, highest score first; min_score keeps the stronger ones', async () => {
    const [first, last] = [unique('Ned'), unique('Nash')];
    const a = await individual(first, last, { phone: '555 0122' });
    const b = await individual(first, last, { phone: '5550122' });
    const c = await individual(first, last);
    const pairs = await allPairs();
    for (const pair of pairs) expect(pair.donor_id).toBeLessThan(pair.other_donor_id);
    const scores = pairs.map((pair) => pair.score);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
    const ours = pairs.filter((pair) => [a, b, c].includes(pair.donor_id));
    expect(
      ours.map(({ donor_id, other_donor_id, score }) => [donor_id, other_donor_id, score]),
    ).toEqual([
      [a, b, 80],
      [b, c, 50],
      [a, c, 50],
    ]);
    const strong = await allPairs('&min_score=80');
    expect(strong.every((pair) => pair.score >= 80)).toBe(true);
    expect(strong.map((pair) => pair.id)).toEqual(
      pairs.filter((pair) => pair.score >= 80).map((pair) => pair.id),
    );
    expect(await allPairs('&min_score=0')).toEqual(pairs);
  });

  test.each(['abc', '101', '-1', '8.5', ''])(
    'min_score=%p is 400 invalid_parameter',
    async (raw) => {
      const response = await service.call<{ error: { code: string; param: string } }>(
        'GET',
        `/api/v1/duplicates?min_score=${raw}`,
      );
      expect(response.status).toBe(400);
      expect(response.body.error).toEqual(
        expect.objectContaining({ code: 'invalid_parameter', param: 'min_score' }),
      );
    },
  );

  test('another institution sees none of this institution’s pairs', async () => {
    const [first, last] = [unique('Ola'), unique('Orr')];
    const a = await individual(first, last);
    await individual(first, last);
    const [candidate] = await candidatesOf(a);
    const theirs = await allPairs('', other.key);
    expect(theirs.map((pair) => pair.id)).not.toContain(candidate!.pair_id);
    const read = await service.call('GET', `/api/v1/duplicates/${candidate!.pair_id}`, {
      key: other.key,
    });
    expect(read.status).toBe(404);
  });
});

describe('POST /duplicates/{id}/dismiss', () => {
  const eventsOf = async (id: number) => {
    const page = await service.call<{ data: { type: string; data: { object: unknown } }[] }>(
      'GET',
      `/api/v1/events?object_type=duplicate_pair&object_id=${id}`,
    );
    expect(page.status).toBe(200);
    return page.body.data;
  };

  async function freshPair(): Promise<{ id: number; a: number; b: number }> {
    const [first, last] = [unique('Pia'), unique('Park')];
    const a = await individual(first, last);
    const b = await individual(first, last);
    const [candidate] = await candidatesOf(a);
    return { id: candidate!.pair_id, a, b };
  }

  test('a dry run answers the dismissed pair and changes nothing', async () => {
    const { id, a } = await freshPair();
    const before = await pairRows();
    const dry = await service.call<Pair>('POST', `/api/v1/duplicates/${id}/dismiss?dry_run=true`, {
      body: { reason: 'Twins' },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual(
      expect.objectContaining({
        id,
        dismissed_at: expect.stringMatching(ISO_MS),
        dismiss_reason: 'Twins',
      }),
    );
    expect(await pairRows()).toEqual(before);
    expect(await candidatesOf(a)).toHaveLength(1);
    expect(await eventsOf(id)).toEqual([]);
  });

  test('dismisses once: 200 with the pair, one event, a replay of the key answers the same, and the pair never returns', async () => {
    const { id, a, b } = await freshPair();
    const headers = { 'Idempotency-Key': `dismiss-${id}` };
    const first = await service.call<Pair>('POST', `/api/v1/duplicates/${id}/dismiss`, {
      headers,
      body: { reason: '  Father and son ' },
    });
    expect(first.status).toBe(200);
    expect(first.body).toEqual(
      expect.objectContaining({
        id,
        donor_id: Math.min(a, b),
        other_donor_id: Math.max(a, b),
        score: 50,
        dismissed_at: expect.stringMatching(ISO_MS),
        dismiss_reason: 'Father and son',
      }),
    );
    const replay = await service.call<Pair>('POST', `/api/v1/duplicates/${id}/dismiss`, {
      headers,
      body: { reason: '  Father and son ' },
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    const events = await eventsOf(id);
    expect(events.map((event) => event.type)).toEqual(['duplicate_pair.dismissed']);
    expect(events[0]!.data.object).toEqual(first.body);

    expect(await candidatesOf(a)).toEqual([]);
    expect((await allPairs()).map((pair) => pair.id)).not.toContain(id);
    // A write that would make the pair stronger does not bring it back.
    const email = `${unique('pia')}@example.org`;
    await service.call('PATCH', `/api/v1/donors/${a}`, { body: { email } });
    await service.call('PATCH', `/api/v1/donors/${b}`, {
      body: { emails: [{ address: email, type: 'home' }] },
    });
    expect(await candidatesOf(b)).toEqual([]);
    expect((await service.call<Pair>('GET', `/api/v1/duplicates/${id}`)).body).toEqual(first.body);
  });

  test('dismissing a dismissed pair is 409 invalid_state_transition and changes nothing', async () => {
    const { id } = await freshPair();
    const first = await service.call('POST', `/api/v1/duplicates/${id}/dismiss`, {
      body: { reason: 'Different people' },
    });
    expect(first.status).toBe(200);
    const before = await pairRows();
    for (const dryRun of ['', '?dry_run=true']) {
      const again = await service.call<{ error: { code: string } }>(
        'POST',
        `/api/v1/duplicates/${id}/dismiss${dryRun}`,
        { body: { reason: 'Again' } },
      );
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('invalid_state_transition');
    }
    expect(await pairRows()).toEqual(before);
    expect(await eventsOf(id)).toHaveLength(1);
  });

  test('a reason is required (422), and nothing changes', async () => {
    const { id } = await freshPair();
    const before = await pairRows();
    for (const body of [
      {},
      { reason: '' },
      { reason: 'x'.repeat(501) },
      { reason: 'ok', extra: 1 },
    ]) {
      const response = await service.call<{ error: { code: string } }>(
        'POST',
        `/api/v1/duplicates/${id}/dismiss`,
        { body },
      );
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('validation_failed');
    }
    expect(await pairRows()).toEqual(before);
  });

  test('another institution’s pair is 404, as a missing one, and stays as it was', async () => {
    const { id } = await freshPair();
    const before = await pairRows();
    const foreign = await service.call<{ error: { code: string } }>(
      'POST',
      `/api/v1/duplicates/${id}/dismiss`,
      { key: other.key, body: { reason: 'Not mine' } },
    );
    const missing = await service.call<{ error: { code: string } }>(
      'POST',
      '/api/v1/duplicates/99999999/dismiss',
      { body: { reason: 'Nobody' } },
    );
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.body.error.code).toBe(missing.body.error.code);
    expect(await pairRows()).toEqual(before);
  });
});
