// Merging two donors (constituents.md §5): everything that named the source names the survivor
// in one transaction, the source a tombstone; the dry run answers exactly what the merge does;
// bad input changes nothing; writes racing a merge are moved or refused, never lost.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { settled, upload } from './helpers/imports.js';
import { created } from './helpers/responses.js';
import { expectSameErrorThreeWays, expectSameFailureThreeWays } from './helpers/threeWays.js';

interface Donor {
  id: number;
  status: string;
  email: string | null;
  external_id: string | null;
  phone: string | null;
  emails: { address: string; type: string; status: string }[];
  phones: { number: string; type: string; status: string }[];
  tag_ids: number[];
  merged_into_id: number | null;
  giving?: { total_amount: number; gift_count: number; soft_credit_total: number };
  [key: string]: unknown;
}

interface Merged extends Donor {
  moved: Record<string, number>;
  dropped: { emails: unknown[]; phones: unknown[]; addresses: unknown[] };
}

const TODAY = '2026-06-15';
let service: TestService;
let other: Tenant;
let counter = 0;
let fund: number;

const post = <T>(path: string, body: Record<string, unknown>) =>
  created<T & { id: number }>(service.call('POST', `/api/v1${path}`, { body }));

async function donor(extra: Record<string, unknown> = {}, key?: string): Promise<number> {
  const n = ++counter;
  const body = {
    role: 'Individual',
    first_name: 'Pat',
    last_name: `Person ${n}`,
    email: `donor${n}@example.org`,
    ...extra,
  };
  return (await created<{ id: number }>(service.call('POST', '/api/v1/donors', { key, body }))).id;
}

const gift = (donorId: number, amount: number, extra: Record<string, unknown> = {}) =>
  post<{ id: number }>('/gifts', {
    donor_id: donorId,
    amount,
    subject: 'Annual fund',
    gift_date: '2026-05-01',
    fund_id: fund,
    ...extra,
  });

const getDonor = async (id: number) =>
  (await service.call<Donor>('GET', `/api/v1/donors/${id}`)).body;
const merge = (survivor: number, body: Record<string, unknown>, query = '') =>
  service.call<Merged>('POST', `/api/v1/donors/${survivor}/merge${query}`, { body });

/** Every row that names a donor, for "nothing changed" and for where records went. */
const snapshot = () =>
  service.db.one(sql.unsafe`
    SELECT (SELECT json_agg(d ORDER BY id) FROM donors d) AS donors,
           (SELECT json_agg(json_build_object('id', id, 'donor_id', donor_id,
                    'soft', soft_credits, 'updated', updated_at) ORDER BY id) FROM gifts) AS gifts,
           (SELECT json_agg(json_build_object('id', id, 'donor_id', donor_id) ORDER BY id)
            FROM pledges) AS pledges,
           (SELECT json_agg(r ORDER BY id) FROM relationships r) AS relationships,
           (SELECT json_agg(json_build_object('id', id, 'donor_id', donor_id) ORDER BY id)
            FROM consents) AS consents,
           (SELECT count(*) FROM events) AS events`);

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: TODAY });
  other = await service.createTenant('Other College', 'USD');
  fund = (await post<{ id: number }>('/funds', { name: 'General', code: 'GEN' })).id;
});

afterAll(async () => {
  await service?.close();
});

describe('POST /donors/{id}/merge', () => {
  test('moves every record of the source to the survivor; the dry run answers the same; the source is a tombstone; one event', async () => {
    const tag = (await post<{ id: number }>('/tags', { name: 'Alumni' })).id;
    const survivor = await donor({ phone: '555-0100', external_id: 'S-1' });
    const source = await donor({
      email: 'pat.source@example.org',
      external_id: 'OLD-7',
      phone: '(555) 0199',
      tag_ids: [tag],
      communication_restrictions: ['do_not_call'],
      emails: [{ address: 'pat.work@example.org', type: 'work' }],
    });
    const third = await donor();
    const campaign = (
      await post<{ id: number }>('/campaigns', { name: 'Spring', code: `SPR-${survivor}` })
    ).id;
    // Hard credit on both sides; the campaign counts both donors (2) before the merge.
    await gift(survivor, 100, { campaign_id: campaign });
    await gift(source, 40, { campaign_id: campaign });
    await gift(source, 60, {
      soft_credits: [{ donor_id: survivor, amount: 60, reason: 'household' }],
    });
    // A third donor's gift crediting both: the two credits become one, capped at the amount.
    const both = await gift(third, 50, {
      soft_credits: [
        { donor_id: survivor, amount: 30, reason: 'solicitor' },
        { donor_id: source, amount: 40, reason: 'household' },
      ],
    });
    // The survivor's gift crediting the source: a credit to the gift's own donor, dropped.
    await gift(survivor, 20, { soft_credits: [{ donor_id: source, amount: 20, reason: 'other' }] });
    const pledge = await post<{ id: number }>('/pledges', {
      donor_id: source,
      amount: 300,
      pledge_date: '2026-01-01',
      fund_id: fund,
      schedule: { frequency: 'monthly', installments: 3, first_due_on: '2026-02-01' },
    });
    const receipted = await gift(source, 25);
    const receipt = await post<{ id: number; number: number; donor_name: string }>('/receipts', {
      gift_id: receipted.id,
    });
    await post('/relationships', { donor_id: source, related_donor_id: third, type: 'sibling_of' });
    await post('/relationships', {
      donor_id: survivor,
      related_donor_id: source,
      type: 'sibling_of',
    });
    await created(
      service.call('POST', `/api/v1/donors/${source}/consents`, {
        body: { channel: 'email', response: 'opt_out', source: 'phone call' },
      }),
    );
    const survivorEmail = (await getDonor(survivor)).email;
    const givingBefore = [(await getDonor(survivor)).giving!, (await getDonor(source)).giving!];
    const progressBefore = (await service.call('GET', `/api/v1/campaigns/${campaign}/progress`))
      .body;
    expect(progressBefore).toMatchObject({ donor_count: 2 });
    const body = { source_id: source, prefer: { email: 'source' } };

    const before = await snapshot();
    const dry = await merge(survivor, body, '?dry_run=true');
    expect(dry.status).toBe(200);
    expect(await snapshot()).toEqual(before);

    const real = await merge(survivor, body);
    expect(real.status).toBe(200);
    const { updated_at: _dryAt, ...dryRest } = dry.body;
    const { updated_at: _realAt, ...realRest } = real.body;
    expect(dryRest).toEqual(realRest);
    expect(real.body).toMatchObject({
      id: survivor,
      status: 'active',
      email: 'pat.source@example.org',
      external_id: 'S-1',
      phone: '555-0100',
      tag_ids: [tag],
      communication_restrictions: ['do_not_call'],
      merged_into_id: null,
      moved: {
        gifts: 3,
        soft_credits: 1,
        pledges: 1,
        recurring_gifts: 0,
        receipts: 1,
        relationships: 1,
        consents: 1,
      },
      dropped: { emails: [], phones: [], addresses: [] },
    });
    // The survivor's own email, which lost, and the source's work email join the list.
    expect(real.body.emails.map((entry) => entry.address)).toEqual([
      survivorEmail,
      'pat.work@example.org',
    ]);
    expect(real.body.phones.map((entry) => entry.number)).toEqual(['(555) 0199']);

    const after = await getDonor(survivor);
    expect(after.giving).toMatchObject({
      total_amount: givingBefore[0]!.total_amount + givingBefore[1]!.total_amount,
      gift_count: givingBefore[0]!.gift_count + givingBefore[1]!.gift_count,
    });
    // The combined credit: 30 + 40 capped at the gift's 50.
    const combined = (
      await service.call<{ soft_credits: unknown[] }>('GET', `/api/v1/gifts/${both.id}`)
    ).body.soft_credits;
    expect(combined).toEqual([
      { donor_id: survivor, amount: 50, base_amount: 50, reason: 'solicitor' },
    ]);
    expect(after.giving!.soft_credit_total).toBe(50);

    const tombstone = await getDonor(source);
    expect(tombstone).toMatchObject({
      status: 'merged',
      merged_into_id: survivor,
      email: null,
      external_id: null,
    });
    const rows = await service.db.one(sql.unsafe`
      SELECT (SELECT count(*)::int FROM gifts WHERE donor_id = ${source}
                OR soft_credit_donor_ids @> ARRAY[${source}::bigint]) AS gifts,
             (SELECT donor_id FROM pledges WHERE id = ${pledge.id}) AS pledge_donor,
             (SELECT json_build_object('donor_id', donor_id, 'number', number,
                                       'donor_name', donor_name)
              FROM receipts WHERE id = ${receipt.id}) AS receipt,
             (SELECT count(*)::int FROM relationships
              WHERE ${source} IN (donor_id, related_donor_id)) AS relationships,
             (SELECT count(*)::int FROM consents WHERE donor_id = ${source}) AS consents`);
    expect(rows).toEqual({
      gifts: 0,
      pledge_donor: survivor,
      receipt: { donor_id: survivor, number: receipt.number, donor_name: receipt.donor_name },
      relationships: 0,
      consents: 0,
    });
    // Campaign progress counts one donor now, as a recomputation from the gifts does.
    const progress = (await service.call('GET', `/api/v1/campaigns/${campaign}/progress`)).body;
    expect(progress).toMatchObject({ donor_count: 1, raised: progressBefore.raised });
    const recount = await service.db.oneFirst(sql.unsafe`
      SELECT count(DISTINCT donor_id)::int FROM gift_lines WHERE campaign_id = ${campaign} AND counted`);
    expect(recount).toBe(1);

    const events = await service.call<{
      data: { type: string; data: { object: Record<string, unknown> } }[];
    }>('GET', `/api/v1/events?object_type=donor&object_id=${survivor}`);
    const mergedEvents = events.body.data.filter((event) => event.type === 'donor.merged');
    expect(mergedEvents).toHaveLength(1);
    expect(mergedEvents[0]!.data.object).toMatchObject({
      id: survivor,
      merged_donor_id: source,
      moved: real.body.moved,
    });

    // Lists leave the tombstone out unless asked; its external_id and email find the survivor.
    const list = await service.call<{ data: Donor[] }>('GET', '/api/v1/donors?limit=100');
    expect(list.body.data.map((row) => row.id)).not.toContain(source);
    const merged = await service.call<{ data: Donor[] }>('GET', '/api/v1/donors?status=merged');
    expect(merged.body.data.map((row) => row.id)).toEqual([source]);
    const byAlias = await service.call<{ data: Donor[] }>(
      'GET',
      '/api/v1/donors?external_id=OLD-7',
    );
    expect(byAlias.body.data.map((row) => row.id)).toEqual([survivor]);

    // The tombstone takes no write, and nothing new may name it.
    const patch = await service.call('PATCH', `/api/v1/donors/${source}`, { body: { phone: '1' } });
    expect(patch.status).toBe(409);
    expect((patch.body as { error: { code: string } }).error.code).toBe('donor_merged');
    const del = await service.call('DELETE', `/api/v1/donors/${source}`);
    expect(del.status).toBe(409);
    const consent = await service.call('POST', `/api/v1/donors/${source}/consents`, {
      body: { channel: 'mail', response: 'opt_out', source: 'letter' },
    });
    expect(consent.status).toBe(409);
    expect((consent.body as { error: { code: string } }).error.code).toBe('donor_merged');
    for (const [path, payload, param] of [
      [
        '/gifts',
        { donor_id: source, amount: 5, gift_date: '2026-05-02', subject: 'Late' },
        'donor_id',
      ],
      [
        '/gifts',
        {
          donor_id: third,
          amount: 5,
          gift_date: '2026-05-02',
          subject: 'Late',
          soft_credits: [{ donor_id: source, amount: 5, reason: 'other' }],
        },
        'soft_credits.0.donor_id',
      ],
      [
        '/pledges',
        {
          donor_id: source,
          amount: 10,
          pledge_date: '2026-01-01',
          schedule: { frequency: 'one_time', installments: 1, first_due_on: '2026-02-01' },
        },
        'donor_id',
      ],
      [
        '/relationships',
        { donor_id: third, related_donor_id: source, type: 'other' },
        'related_donor_id',
      ],
    ] as const) {
      const refused = await service.call('POST', `/api/v1${path}`, {
        body: payload,
        headers: { 'Idempotency-Key': `tomb-${path}-${param}` },
      });
      expect(refused.status).toBe(422);
      expect(
        (refused.body as { error: { errors: { param: string; code: string }[] } }).error.errors,
      ).toContainEqual(expect.objectContaining({ param, code: 'reference_inactive' }));
    }
  });

  test('bad input: itself, another role class, a merged donor, another institution’s, a field that cannot be preferred: documented codes, nothing changed', async () => {
    const survivor = await donor();
    const source = await donor();
    const organization = (
      await created<{ id: number }>(
        service.call('POST', '/api/v1/donors', {
          body: {
            role: 'Foundation',
            organization_name: 'Fdn',
            email: `fdn${survivor}@example.org`,
          },
        }),
      )
    ).id;
    const foreign = await donor({}, other.key);
    const path = `/api/v1/donors/${survivor}/merge`;
    const cases: [Record<string, unknown>, { param: string; code: string }[]][] = [
      [{ source_id: survivor }, [{ param: 'source_id', code: 'invalid_value' }]],
      [{ source_id: organization }, [{ param: 'source_id', code: 'invalid_value' }]],
      [{ source_id: foreign }, [{ param: 'source_id', code: 'reference_not_found' }]],
      [{ source_id: 999999999 }, [{ param: 'source_id', code: 'reference_not_found' }]],
      [{}, [{ param: 'source_id', code: 'required' }]],
      [{ source_id: 'x' }, [{ param: 'source_id', code: 'invalid_type' }]],
      [
        { source_id: source, prefer: { status: 'source', email: 'survivor' } },
        [
          { param: 'prefer.status', code: 'unknown_field' },
          { param: 'prefer.email', code: 'invalid_value' },
        ],
      ],
    ];
    for (const [body, expected] of cases)
      await expectSameFailureThreeWays(service, path, 'POST', body, expected, snapshot);

    // A merged source; a merge into a merged donor; another institution's survivor.
    const gone = await donor();
    expect((await merge(source, { source_id: gone })).status).toBe(200);
    await expectSameFailureThreeWays(
      service,
      path,
      'POST',
      { source_id: gone },
      [{ param: 'source_id', code: 'invalid_value' }],
      snapshot,
    );
    await expectSameErrorThreeWays(
      service,
      `/api/v1/donors/${gone}/merge`,
      'POST',
      { source_id: survivor },
      { status: 409, code: 'donor_merged' },
      snapshot,
    );
    await expectSameErrorThreeWays(
      service,
      `/api/v1/donors/${foreign}/merge`,
      'POST',
      { source_id: survivor },
      { status: 404, code: 'resource_not_found' },
      snapshot,
    );
  });

  test('a merge of a tombstone’s survivor repoints the tombstone; imports find the survivor by a merged external_id and email', async () => {
    const a = await donor({ external_id: 'CHAIN-A' });
    const b = await donor();
    const c = await donor({ external_id: 'CHAIN-C' });
    const bEmail = (await getDonor(b)).email;
    expect((await merge(b, { source_id: a })).status).toBe(200);
    expect((await getDonor(b)).external_id).toBe('CHAIN-A');
    expect((await merge(c, { source_id: b })).status).toBe(200);
    expect((await getDonor(a)).merged_into_id).toBe(c);
    const found = await service.call<{ data: Donor[] }>(
      'GET',
      '/api/v1/donors?external_id=CHAIN-A',
    );
    expect(found.body.data.map((row) => row.id)).toEqual([c]);
    // A gift import names the survivor by a tombstone's external_id, and by one's email.
    const csv = [
      'donor_external_id,donor_email,amount,gift_date,subject',
      'CHAIN-A,,11,2026-05-01,By alias',
      `,${bEmail},12,2026-05-01,By email`,
    ].join('\n');
    const answer = await upload(service, 'resource=gifts', csv);
    expect(answer.status).toBe(202);
    expect(await settled(service, answer.body.id)).toMatchObject({
      status: 'completed',
      rows_succeeded: 2,
    });
    const donors = await service.db.anyFirst(sql.unsafe`
      SELECT donor_id FROM gifts WHERE subject IN ('By alias', 'By email') ORDER BY amount`);
    expect(donors.map(Number)).toEqual([c, c]);
  });
});

describe('writes racing a merge', () => {
  test('gifts, pledges and relationships naming the source on 2 workers are moved or refused, never left on the tombstone; no deadlock', async () => {
    await service.startWorker();
    const outcomes = { committed: 0, refused: 0 };
    for (let round = 0; round < 5; round++) {
      const survivor = await donor();
      const source = await donor();
      const friends: number[] = [];
      for (let index = 0; index < 10; index++) friends.push(await donor());
      const writes = Array.from({ length: 30 }, (_, index) => {
        const kind = index % 3;
        const body =
          kind === 0
            ? {
                donor_id: source,
                amount: 10,
                subject: 'Racing',
                gift_date: '2026-05-01',
                fund_id: fund,
                soft_credits: [{ donor_id: survivor, amount: 5, reason: 'household' }],
              }
            : kind === 1
              ? {
                  donor_id: source,
                  amount: 10,
                  pledge_date: '2026-01-01',
                  schedule: { frequency: 'one_time', installments: 1, first_due_on: '2026-02-01' },
                }
              : {
                  donor_id: index % 2 ? source : friends[(index - 2) / 3]!,
                  related_donor_id: index % 2 ? friends[(index - 2) / 3]! : source,
                  type: 'other',
                };
        const path = ['/gifts', '/pledges', '/relationships'][kind]!;
        return service.call('POST', `/api/v1${path}`, {
          body,
          headers: { 'Idempotency-Key': `race-${round}-${index}` },
        });
      });
      const merging = merge(survivor, { source_id: source });
      const answers = await Promise.all([...writes, merging]);
      const mergeAnswer = answers.pop()!;
      expect(mergeAnswer.status).toBe(200);
      for (const answer of answers) {
        if (![201, 422].includes(answer.status))
          throw new Error(
            `answered ${answer.status} (Request-Id ${answer.headers.get('request-id')}): ${JSON.stringify(answer.body)}`,
          );
        if (answer.status === 422)
          expect(
            (answer.body as { error: { errors: { code: string }[] } }).error.errors[0]!.code,
          ).toBe('reference_inactive');
      }
      const left = await service.db.oneFirst(sql.unsafe`
        SELECT (SELECT count(*) FROM gifts WHERE donor_id = ${source})
             + (SELECT count(*) FROM pledges WHERE donor_id = ${source})
             + (SELECT count(*) FROM relationships WHERE ${source} IN (donor_id, related_donor_id))`);
      expect(Number(left)).toBe(0);
      const committed = answers.filter((answer) => answer.status === 201).length;
      outcomes.committed += committed;
      outcomes.refused += answers.length - committed;
      const onSurvivor = await service.db.oneFirst(sql.unsafe`
        SELECT (SELECT count(*) FROM gifts WHERE donor_id = ${survivor})
             + (SELECT count(*) FROM pledges WHERE donor_id = ${survivor})
             + (SELECT count(*) FROM relationships WHERE ${survivor} IN (donor_id, related_donor_id))`);
      // Every write that committed is on the survivor: moved by the merge or written before it.
      expect(Number(onSurvivor)).toBe(committed);
    }
    // The writes did race the merge: some came before it, some after.
    expect(outcomes.committed).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);
  }, 120_000);
});

describe('admin donors merge', () => {
  const adminJs = path.resolve(process.cwd(), 'dist/cli/admin.js');
  const admin = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [adminJs, 'donors', 'merge', ...args], {
        env: {
          PATH: process.env.PATH,
          DGS_API_KEY: service.tenant.key,
          DGS_API_URL: service.api.url,
        },
      });
      let [stdout, stderr] = ['', ''];
      child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
      child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  test('runs the dry run (counts on stderr), then the merge through the API; a wrong institution or a refused merge changes nothing', async () => {
    const survivor = await donor();
    const source = await donor();
    await gift(source, 15);
    const ids = ['--survivor', String(survivor), '--source', String(source)];
    const before = await snapshot();
    const wrong = await admin([...ids, '--institution', String(other.institutionId)]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`The API key is of institution ${service.tenant.institutionId}`);
    const dry = await admin([
      ...ids,
      '--institution',
      String(service.tenant.institutionId),
      '--dry-run',
    ]);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain('"gifts":1');
    expect(JSON.parse(dry.stdout)).toMatchObject({
      merged: null,
      dry_run: { moved: { gifts: 1 } },
    });
    expect(await snapshot()).toEqual(before);

    const run = await admin([...ids, '--institution', String(service.tenant.institutionId)]);
    expect(run.code).toBe(0);
    const answer = JSON.parse(run.stdout) as { merged: Merged };
    expect(answer.merged).toMatchObject({ id: survivor, moved: { gifts: 1 } });
    expect((await getDonor(source)).merged_into_id).toBe(survivor);
    // Again: the merge is refused now (the source is merged), nothing changes.
    const again = await admin([...ids, '--institution', String(service.tenant.institutionId)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('validation_failed');
  });
});
