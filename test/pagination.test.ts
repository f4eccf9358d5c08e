import { sql } from 'slonik';
import { startTestService, type TestService } from './helpers/harness.js';
import { sleep } from './helpers/wait.js';

interface Page<T = { id: number }> {
  object: string;
  url: string;
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: T[];
}
type ErrorBody = { error: { code: string; param?: string; type: string } };

let service: TestService;
let donorA: number;
let donorB: number;

const get = <T = Page>(path: string, key?: string) =>
  service.call<T>('GET', path, key ? { key } : {});
const q = (params: Record<string, string | number>) =>
  new URLSearchParams(
    Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString();

/** Inserts gifts in one transaction, so they share created_at to the microsecond. */
async function insertGifts(
  count: number,
  donorId: number,
  institutionId = service.tenant.institutionId,
): Promise<number[]> {
  return service.db.transaction(async (tx) => {
    const ids = await tx.anyFirst(sql.unsafe`
      INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type)
      SELECT ${institutionId}, ${donorId}, 10, 'USD', 'Gift ' || n, '2026-01-01', 'cash'
      FROM generate_series(1, ${count}) AS n
      RETURNING id`);
    return ids.map(Number);
  });
}

async function walkForward(
  firstPath: string,
  limit: number,
): Promise<{ ids: number[]; pages: Page[] }> {
  const pages: Page[] = [];
  let response = await get(`${firstPath}${firstPath.includes('?') ? '&' : '?'}limit=${limit}`);
  for (;;) {
    expect(response.status).toBe(200);
    pages.push(response.body);
    if (!response.body.has_more) break;
    response = await get(
      `/api/v1/gifts?${q({ limit, starting_after: response.body.next_cursor! })}`,
    );
  }
  return { ids: pages.flatMap((page) => page.data.map((row) => row.id)), pages };
}

let allIds: number[];

beforeAll(async () => {
  service = await startTestService();
  const donor = (email: string) =>
    service.call<{ id: number }>('POST', '/api/v1/donors', {
      body: { role: 'Individual', first_name: 'Page', last_name: 'Walker', email },
    });
  donorA = (await donor('a@example.org')).body.id;
  donorB = (await donor('b@example.org')).body.id;
  await insertGifts(30, donorA);
  await insertGifts(27, donorB);
  allIds = (await service.db.anyFirst(sql.unsafe`SELECT id FROM gifts ORDER BY id DESC`)).map(
    Number,
  );
});
afterAll(async () => {
  await service?.close();
});

describe('the list envelope', () => {
  test('a first page: newest first, default limit 25, cursors only where rows lie', async () => {
    const response = await get('/api/v1/gifts');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      object: 'list',
      url: '/api/v1/gifts',
      has_more: true,
      previous_cursor: null,
    });
    expect(response.body.data.map((row) => row.id)).toEqual(allIds.slice(0, 25));
    expect(typeof response.body.next_cursor).toBe('string');
    expect(response.body.data[0]).toMatchObject({ object: 'gift', amount: 10, currency: 'USD' });
  });

  test.each([
    ['0', 1],
    ['-5', 1],
    ['1', 1],
    ['100', 57],
    ['1000', 57],
    ['+7', 7],
    ['9'.repeat(30), 57],
    [`-${'9'.repeat(30)}`, 1],
    [`${'0'.repeat(30)}7`, 7],
  ])('limit=%s is coerced (%i rows)', async (limit, rows) => {
    const response = await get(`/api/v1/gifts?limit=${encodeURIComponent(limit)}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(rows);
  });

  test('limit above 100 returns 100', async () => {
    await insertGifts(50, donorA);
    allIds = (await service.db.anyFirst(sql.unsafe`SELECT id FROM gifts ORDER BY id DESC`)).map(
      Number,
    );
    const response = await get('/api/v1/gifts?limit=250');
    expect(response.body.data).toHaveLength(100);
    expect(response.body.has_more).toBe(true);
  });

  test.each(['abc', '1.5', '', '10e2'])('limit=%s is 400 invalid_parameter', async (limit) => {
    const response = await get<ErrorBody>(`/api/v1/gifts?limit=${encodeURIComponent(limit)}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param: 'limit' });
  });

  test('an unknown query parameter is 400 invalid_parameter', async () => {
    const response = await get<ErrorBody>('/api/v1/gifts?page=2');
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param: 'page' });
  });

  test('an empty list has both cursors null', async () => {
    const response = await get('/api/v1/gifts?donor_id=999999');
    expect(response.body).toMatchObject({
      has_more: false,
      next_cursor: null,
      previous_cursor: null,
      data: [],
    });
  });
});

describe('walking the pages', () => {
  test('forward then back returns every row exactly once, in order, rows sharing a timestamp included', async () => {
    const forward = await walkForward('/api/v1/gifts', 10);
    expect(forward.ids).toEqual(allIds);
    const lastPage = forward.pages.at(-1)!;
    expect(lastPage.next_cursor).toBeNull();
    expect(forward.pages[0]!.previous_cursor).toBeNull();

    const backward: number[][] = [];
    let cursor = lastPage.previous_cursor;
    backward.push(lastPage.data.map((row) => row.id));
    while (cursor) {
      const response = await get(`/api/v1/gifts?${q({ limit: 10, ending_before: cursor })}`);
      expect(response.status).toBe(200);
      backward.unshift(response.body.data.map((row) => row.id));
      cursor = response.body.has_more ? response.body.previous_cursor : null;
      if (!response.body.has_more) expect(response.body.previous_cursor).toBeNull();
    }
    expect(backward.flat()).toEqual(allIds);
  });

  test('rows deleted or created mid-walk: nothing is skipped or repeated', async () => {
    const first = await get(`/api/v1/gifts?limit=10`);
    const seen = first.body.data.map((row) => row.id);
    // Delete a row on a later page, and create newer rows while walking.
    const doomed = allIds[25]!;
    await service.db.query(sql.unsafe`DELETE FROM gifts WHERE id = ${doomed}`);
    await insertGifts(5, donorA);
    let response = first;
    while (response.body.has_more) {
      response = await get(
        `/api/v1/gifts?${q({ limit: 10, starting_after: response.body.next_cursor! })}`,
      );
      seen.push(...response.body.data.map((row) => row.id));
    }
    expect(seen).toEqual(allIds.filter((id) => id !== doomed));
    expect(new Set(seen).size).toBe(seen.length);
    allIds = (await service.db.anyFirst(sql.unsafe`SELECT id FROM gifts ORDER BY id DESC`)).map(
      Number,
    );
  });

  test('with both cursors, starting_after wins and ending_before is ignored', async () => {
    const first = await get('/api/v1/gifts?limit=5');
    const both = await get(
      `/api/v1/gifts?${q({ limit: 5, starting_after: first.body.next_cursor!, ending_before: 'garbage' })}`,
    );
    expect(both.status).toBe(200);
    expect(both.body.data.map((row) => row.id)).toEqual(allIds.slice(5, 10));
  });
});

describe('pinned filters', () => {
  test('filters from the first request carry through the cursor', async () => {
    const first = await get(`/api/v1/gifts?${q({ donor_id: donorB, limit: 10 })}`);
    const ids = first.body.data.map((row) => row.id);
    let response = first;
    while (response.body.has_more) {
      response = await get(
        `/api/v1/gifts?${q({ starting_after: response.body.next_cursor!, limit: 10 })}`,
      );
      ids.push(...response.body.data.map((row) => row.id));
    }
    const expected = (
      await service.db.anyFirst(
        sql.unsafe`SELECT id FROM gifts WHERE donor_id = ${donorB} ORDER BY id DESC`,
      )
    ).map(Number);
    expect(ids).toEqual(expected);
  });

  test('repeating the same filter with the cursor is accepted; a different value is 400 invalid_cursor', async () => {
    const first = await get(`/api/v1/gifts?${q({ donor_id: donorB, limit: 5 })}`);
    const same = await get(
      `/api/v1/gifts?${q({ donor_id: donorB, starting_after: first.body.next_cursor! })}`,
    );
    expect(same.status).toBe(200);
    const other = await get<ErrorBody>(
      `/api/v1/gifts?${q({ donor_id: donorA, starting_after: first.body.next_cursor! })}`,
    );
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
    const added = await get<ErrorBody>(
      `/api/v1/gifts?${q({ type: 'cash', starting_after: first.body.next_cursor! })}`,
    );
    expect(added.status).toBe(400);
    expect(added.body.error.code).toBe('invalid_cursor');
  });
});

describe('invalid cursors', () => {
  let next: string;
  beforeAll(async () => {
    next = (await get('/api/v1/gifts?limit=5')).body.next_cursor!;
  });

  const flip = (text: string, index: number) =>
    text.slice(0, index) + (text[index] === 'A' ? 'B' : 'A') + text.slice(index + 1);

  test.each([
    ['garbage', () => 'not-a-cursor'],
    ['a page number', () => '2'],
    ['a tampered payload', () => flip(next, 3)],
    ['a tampered signature', () => flip(next, next.length - 2)],
    [
      'a forged payload with the old signature',
      () => {
        const [data, signature] = next.split('.');
        const payload = JSON.parse(Buffer.from(data!, 'base64url').toString()) as { k: number };
        payload.k += 1000;
        return `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`;
      },
    ],
  ])('%s is 400 invalid_cursor', async (_label, make) => {
    const response = await get<ErrorBody>(`/api/v1/gifts?${q({ starting_after: make() })}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_cursor',
    });
  });

  test('a cursor of another institution is 400 invalid_cursor', async () => {
    const other = await service.createTenant('Other College');
    const response = await get<ErrorBody>(
      `/api/v1/gifts?${q({ starting_after: next })}`,
      other.key,
    );
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_cursor');
  });

  test('a cursor used on another endpoint is 400 invalid_cursor', async () => {
    const response = await get<ErrorBody>(`/api/v1/donors?${q({ starting_after: next })}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_cursor');
  });

  test('a next_cursor sent as ending_before is 400 invalid_cursor', async () => {
    const response = await get<ErrorBody>(`/api/v1/gifts?${q({ ending_before: next })}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_cursor', param: 'ending_before' });
  });

  test('an expired cursor is 400 invalid_cursor', async () => {
    const shortLived = await startTestService({ CURSOR_TTL_SECONDS: '1' });
    try {
      const donor = await shortLived.call<{ id: number }>('POST', '/api/v1/donors', {
        body: { role: 'Organization', organization_name: 'Expiring Inc', email: 'x@example.org' },
      });
      for (let n = 0; n < 3; n += 1) {
        await shortLived.call('POST', '/api/v1/gifts', {
          body: { donor_id: donor.body.id, amount: 1, subject: 'x', gift_date: '2026-01-01' },
        });
      }
      const first = await shortLived.call<Page>('GET', '/api/v1/gifts?limit=1');
      const fresh = await shortLived.call<Page>(
        'GET',
        `/api/v1/gifts?${q({ starting_after: first.body.next_cursor! })}`,
      );
      expect(fresh.status).toBe(200);
      await sleep(2_100);
      const stale = await shortLived.call<ErrorBody>(
        'GET',
        `/api/v1/gifts?${q({ starting_after: first.body.next_cursor! })}`,
      );
      expect(stale.status).toBe(400);
      expect(stale.body.error.code).toBe('invalid_cursor');
    } finally {
      await shortLived.close();
    }
  });
});

describe('tenancy', () => {
  test('a list shows only the caller institution; filtering by a foreign id gives an empty page', async () => {
    const other = await service.createTenant('Third College');
    const theirDonor = await service.call<{ id: number }>('POST', '/api/v1/donors', {
      key: other.key,
      body: { role: 'Organization', organization_name: 'Their Org', email: 'their@example.org' },
    });
    const theirGift = await service.call<{ id: number }>('POST', '/api/v1/gifts', {
      key: other.key,
      body: { donor_id: theirDonor.body.id, amount: 5, subject: 'Theirs', gift_date: '2026-02-02' },
    });
    const mine = await get('/api/v1/gifts?limit=100');
    expect(mine.body.data.map((row) => row.id)).not.toContain(theirGift.body.id);
    const foreignFilter = await get(`/api/v1/gifts?donor_id=${theirDonor.body.id}`);
    expect(foreignFilter.status).toBe(200);
    expect(foreignFilter.body.data).toEqual([]);
    const theirs = await get('/api/v1/gifts', other.key);
    expect(theirs.body.data.map((row) => row.id)).toEqual([theirGift.body.id]);
  });
});
