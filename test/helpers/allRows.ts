import type { TestService } from './harness.js';

/** Every row of a list, walked forward 100 at a time through its cursors (each page a 200). */
export async function allRows<T>(service: TestService, path: string, key: string): Promise<T[]> {
  const rows: T[] = [];
  let url = `/api/v1${path}?limit=100`;
  for (;;) {
    const page = await service.call<{ data: T[]; has_more: boolean; next_cursor: string }>(
      'GET',
      url,
      { key },
    );
    expect(page.status).toBe(200);
    rows.push(...page.body.data);
    if (!page.body.has_more) return rows;
    url = `/api/v1${path}?limit=100&starting_after=${encodeURIComponent(page.body.next_cursor)}`;
  }
}
