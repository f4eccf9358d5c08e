// Scholarship reporting (product.md §4): GET /scholarships/fund-summaries, and report routing.
import {
  AWARDED,
  SUMMARIES,
  awarded,
  awards,
  cycle,
  foreign,
  fund,
  get,
  other,
  patch,
  query,
  scholarship,
  service,
  setUpReportTests,
  summaries,
  walkBackward,
  walkForward,
  type AwardedStudent,
  type ErrorBody,
  type FundSummary,
} from './helpers/scholarshipReports.js';

setUpReportTests();

describe('GET /scholarships/fund-summaries', () => {
  /** The fund summaries the awarded-students rows of the cycle add up to, newest fund first. */
  async function expectedSummaries(cycleId: number): Promise<FundSummary[]> {
    const pages = await walkForward<AwardedStudent>(AWARDED, { award_cycle_id: cycleId }, 100);
    const byFund = new Map<number, { rows: AwardedStudent[] }>();
    for (const row of pages.flatMap((page) => page.data)) {
      const entry = byFund.get(row.fund.id) ?? { rows: [] };
      entry.rows.push(row);
      byFund.set(row.fund.id, entry);
    }
    return [...byFund.entries()]
      .sort(([a], [b]) => b - a)
      .map(([, { rows }]) => ({
        object: 'fund_summary',
        fund: rows[0]!.fund,
        award_cycle_id: cycleId,
        awards_count: rows.length,
        students_count: new Set(rows.map((row) => row.student.id)).size,
        // In cents, so that the expected total is exact.
        amount_awarded: rows.reduce((cents, row) => cents + Math.round(row.amount * 100), 0) / 100,
      }));
  }

  test('one row per fund with awarded awards in the cycle, adding up to the awarded students', async () => {
    const response = await summaries({ award_cycle_id: cycle.fall });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      object: 'list',
      url: '/api/v1/scholarships/fund-summaries',
      has_more: false,
      next_cursor: null,
      previous_cursor: null,
    });
    expect(response.body.data).toEqual(await expectedSummaries(cycle.fall));
  });

  test('the totals, written out', async () => {
    const response = await summaries({ award_cycle_id: cycle.fall });
    expect(response.body.data).toEqual([
      {
        object: 'fund_summary',
        fund: { id: fund.general, code: 'GEN', name: 'General Scholarships' },
        award_cycle_id: cycle.fall,
        awards_count: 3,
        students_count: 3,
        amount_awarded: 1350.15,
      },
      {
        object: 'fund_summary',
        fund: { id: fund.arts, code: 'ARTS', name: 'Arts Fund' },
        award_cycle_id: cycle.fall,
        awards_count: 1,
        students_count: 1,
        amount_awarded: 1200.25,
      },
      {
        object: 'fund_summary',
        fund: { id: fund.stem, code: 'STEM-END', name: 'STEM Endowment' },
        award_cycle_id: cycle.fall,
        awards_count: 3,
        students_count: 2,
        amount_awarded: 5000.5,
      },
    ]);
    // Funds with no awards in the cycle, or only offers, have no row.
    const funds = response.body.data.map((row) => row.fund.id);
    expect(funds).not.toContain(fund.music);
    expect(funds).not.toContain(fund.unused);
  });

  test('amount_awarded is exact where floating-point addition is not', async () => {
    // 900 + 450.1 + 0.05 in binary floating point is 1350.1499999999999.
    expect(900 + 450.1 + 0.05).not.toBe(1350.15);
    const response = await summaries({ award_cycle_id: cycle.fall });
    expect(response.body.data.find((row) => row.fund.id === fund.general)?.amount_awarded).toBe(
      1350.15,
    );
  });

  test('another cycle is summarised on its own', async () => {
    const response = await summaries({ award_cycle_id: cycle.spring });
    expect(response.body.data).toEqual(await expectedSummaries(cycle.spring));
    expect(response.body.data).toEqual([
      expect.objectContaining({
        fund: expect.objectContaining({ id: fund.stem }),
        awards_count: 1,
        amount_awarded: 4000,
      }),
    ]);
  });

  test('walking pages of 1 forward and back gives each fund once', async () => {
    const forward = await walkForward<FundSummary>(SUMMARIES, { award_cycle_id: cycle.fall }, 1);
    const funds = forward.map((page) => page.data.map((row) => row.fund.id));
    expect(funds).toEqual([[fund.general], [fund.arts], [fund.stem]]);
    const backward = await walkBackward<FundSummary>(SUMMARIES, forward.at(-1)!, 1);
    expect(backward.map((page) => page.data)).toEqual(forward.map((page) => page.data));
  });

  test('award_cycle_id is required and pinned', async () => {
    const missing = await get<ErrorBody>(`${SUMMARIES}?limit=1`);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({
      code: 'parameter_missing',
      param: 'award_cycle_id',
    });

    const first = await summaries({ award_cycle_id: cycle.fall, limit: 1 });
    const cursor = first.body.next_cursor!;
    const repeated = await summaries({
      award_cycle_id: cycle.fall,
      starting_after: cursor,
      limit: 1,
    });
    expect(repeated.status).toBe(200);
    expect(repeated.body.data.map((row) => row.fund.id)).toEqual([fund.arts]);

    const different = await get<ErrorBody>(
      `${SUMMARIES}?${query({ award_cycle_id: cycle.spring, starting_after: cursor })}`,
    );
    expect(different.status).toBe(400);
    expect(different.body.error.code).toBe('invalid_cursor');

    // A cursor of one report is not a cursor of the other.
    const crossed = await get<ErrorBody>(`${AWARDED}?${query({ starting_after: cursor })}`);
    expect(crossed.status).toBe(400);
    expect(crossed.body.error.code).toBe('invalid_cursor');
  });

  test.each([
    ['award_cycle_id=x', 'award_cycle_id'],
    ['award_cycle_id=1&fund_id=1', 'fund_id'],
    ['award_cycle_id=1&q=stem', 'q'],
  ])('%s is 400 invalid_parameter', async (params, param) => {
    const response = await get<ErrorBody>(`${SUMMARIES}?${params}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param });
  });

  test('another institution’s cycle gives an empty page; its own key sees its own fund', async () => {
    const ours = await summaries({ award_cycle_id: foreign.cycle });
    expect(ours.status).toBe(200);
    expect(ours.body).toMatchObject({ has_more: false, next_cursor: null, data: [] });

    const theirs = await summaries({ award_cycle_id: foreign.cycle }, other.key);
    expect(theirs.body.data).toEqual([
      {
        object: 'fund_summary',
        fund: { id: foreign.fund, code: 'STEM-END', name: 'STEM Endowment' },
        award_cycle_id: foreign.cycle,
        awards_count: 1,
        students_count: 1,
        amount_awarded: 2500,
      },
    ]);
    const theirsOnOurs = await summaries({ award_cycle_id: cycle.fall }, other.key);
    expect(theirsOnOurs.body.data).toEqual([]);
  });

  test('a summary follows the awards as their status changes', async () => {
    const offered = awards.notAwarded[0]!; // Grace's STEM Access offer, 700
    await patch(`/awards/${offered}`, { status: 'accepted' });
    try {
      const response = await summaries({ award_cycle_id: cycle.fall });
      expect(response.body.data.find((row) => row.fund.id === fund.stem)).toMatchObject({
        awards_count: 4,
        students_count: 3,
        amount_awarded: 5700.5,
      });
      expect(response.body.data).toEqual(await expectedSummaries(cycle.fall));
    } finally {
      // Leave the cycle as the other tests expect it (accepted -> cancelled is allowed).
      await patch(`/awards/${offered}`, { status: 'cancelled' });
    }
  });
});

describe('routing', () => {
  test.each([AWARDED, SUMMARIES])('GET %s is the report, not a scholarship id', async (path) => {
    const response = await get<ErrorBody>(path);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('parameter_missing');
  });

  test('GET /scholarships/{id} still retrieves a scholarship', async () => {
    const response = await get<{ id: number; object: string }>(
      `/scholarships/${scholarship.artsPrize}`,
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: scholarship.artsPrize, object: 'scholarship' });
  });

  test('a write to a report path is 405 with Allow: GET, not an update of a scholarship', async () => {
    const response = await service.call<{ error: { code: string } }>(
      'PATCH',
      '/api/v1/scholarships/awarded-students',
      { body: { name: 'x' } },
    );
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(response.body.error.code).toBe('method_not_allowed');
  });

  test('requests to a report are counted under the report’s route in /metrics', async () => {
    await awarded({ award_cycle_id: cycle.fall });
    const metrics = await fetch(`${service.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(
      /http_requests_total\{method="GET",route="\/api\/v1\/scholarships\/awarded-students",status="200"\} \d+/,
    );
  });
});
