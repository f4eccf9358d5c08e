// GET /donors/{id}/eligibility (constituents.md §4): each reason alone and together in order,
// the institution's consent mode, purpose against channel-wide answers, the latest answer by
// captured_at, and the contact point of each channel.
import { randomUUID } from 'node:crypto';
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import type { ErrorEnvelope } from './helpers/threeWays.js';

// Mid-December: a seasonal window over the year end is in season, a summer one is not.
const TODAY = '2026-12-15';

let service: TestService;
let optIn: Tenant;

beforeAll(async () => {
  service = await startTestService({ CLOCK_TODAY: TODAY });
  optIn = await service.createTenant('Opt-in College');
  const mode = await service.call('PATCH', '/api/v1/institution', {
    key: optIn.key,
    body: { consent_mode: 'opt_in' },
  });
  expect(mode.status).toBe(200);
});

afterAll(async () => {
  await service?.close();
});

interface Eligibility {
  object: string;
  donor_id: number;
  channel: string;
  purpose: string | null;
  allowed: boolean;
  reasons: string[];
}

async function donor(extra: Record<string, unknown> = {}, key?: string): Promise<number> {
  const response = await service.call<{ id: number }>('POST', '/api/v1/donors', {
    key,
    body: {
      role: 'Individual',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: `ada.${randomUUID()}@example.org`,
      phone: '+44 20 7946 0000',
      address: { line1: '12 St James Square', city: 'London', country: 'GB' },
      ...extra,
    },
    headers: { 'Idempotency-Key': randomUUID() },
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

async function consent(
  donorId: number,
  body: Record<string, unknown>,
  key?: string,
): Promise<number> {
  const response = await service.call<{ id: number }>(
    'POST',
    `/api/v1/donors/${donorId}/consents`,
    {
      key,
      body: { source: 'Reply card', statement: 'Yes, keep in touch.', ...body },
    },
  );
  expect(response.status).toBe(201);
  return response.body.id;
}

const eligibility = (donorId: number, query: string, key?: string) =>
  service.call<Eligibility>('GET', `/api/v1/donors/${donorId}/eligibility?${query}`, { key });

/** The reasons of one question, after checking the whole answer. */
async function reasonsOf(
  donorId: number,
  channel: string,
  purpose: string | null = null,
  key?: string,
): Promise<string[]> {
  const query = `channel=${channel}${purpose === null ? '' : `&purpose=${purpose}`}`;
  const response = await eligibility(donorId, query, key);
  expect(response.status).toBe(200);
  expect(response.body).toEqual({
    object: 'eligibility',
    donor_id: donorId,
    channel,
    purpose,
    allowed: response.body.reasons.length === 0,
    reasons: expect.any(Array),
  });
  return response.body.reasons;
}

describe('each reason alone', () => {
  test('a reachable donor in opt_out mode is allowed on every channel', async () => {
    const id = await donor();
    for (const channel of ['email', 'mail', 'phone', 'sms'])
      expect(await reasonsOf(id, channel)).toEqual([]);
    const response = await eligibility(id, 'channel=email');
    expect(response.body).toEqual({
      object: 'eligibility',
      donor_id: id,
      channel: 'email',
      purpose: null,
      allowed: true,
      reasons: [],
    });
  });

  test('deceased', async () => {
    const id = await donor({ status: 'deceased' });
    expect(await reasonsOf(id, 'email')).toEqual(['deceased']);
  });

  test('restricted: the channel’s own restriction, and do_not_solicit for every channel', async () => {
    const id = await donor({
      communication_restrictions: ['do_not_email', 'do_not_call', 'no_data_sharing'],
    });
    expect(await reasonsOf(id, 'email')).toEqual(['restricted']);
    expect(await reasonsOf(id, 'phone')).toEqual(['restricted']);
    expect(await reasonsOf(id, 'sms')).toEqual([]);
    expect(await reasonsOf(id, 'mail')).toEqual([]);
    const sms = await donor({ communication_restrictions: ['do_not_sms'] });
    expect(await reasonsOf(sms, 'sms')).toEqual(['restricted']);
    expect(await reasonsOf(sms, 'phone')).toEqual([]);
    const mail = await donor({ communication_restrictions: ['do_not_mail'] });
    expect(await reasonsOf(mail, 'mail')).toEqual(['restricted']);
    const none = await donor({ communication_restrictions: ['do_not_solicit'] });
    for (const channel of ['email', 'mail', 'phone', 'sms'])
      expect(await reasonsOf(none, channel)).toEqual(['restricted']);
  });

  test('opted_out', async () => {
    const id = await donor();
    await consent(id, { channel: 'email', response: 'opt_out' });
    expect(await reasonsOf(id, 'email')).toEqual(['opted_out']);
    expect(await reasonsOf(id, 'sms')).toEqual([]);
  });

  test('no_opt_in, in opt_in mode only', async () => {
    const id = await donor({}, optIn.key);
    expect(await reasonsOf(id, 'email', null, optIn.key)).toEqual(['no_opt_in']);
    await consent(id, { channel: 'email', response: 'opt_in' }, optIn.key);
    expect(await reasonsOf(id, 'email', null, optIn.key)).toEqual([]);
    expect(await reasonsOf(id, 'mail', null, optIn.key)).toEqual(['no_opt_in']);
  });
});

describe('no_contact_point per channel', () => {
  test('email: the primary, or an active listed email', async () => {
    const none = await donor({ email: null });
    expect(await reasonsOf(none, 'email')).toEqual(['no_contact_point']);
    const inactive = await donor({
      email: null,
      emails: [
        { address: 'old@example.org', type: 'home', status: 'bounced' },
        { address: 'older@example.org', type: 'work', status: 'inactive' },
      ],
    });
    expect(await reasonsOf(inactive, 'email')).toEqual(['no_contact_point']);
    const listed = await donor({
      email: null,
      emails: [{ address: 'work@example.org', type: 'work' }],
    });
    expect(await reasonsOf(listed, 'email')).toEqual([]);
  });

  test('phone and sms: the primary phone, or an active listed phone', async () => {
    const none = await donor({
      phone: null,
      phones: [{ number: '555 0100', type: 'mobile', status: 'inactive' }],
    });
    expect(await reasonsOf(none, 'phone')).toEqual(['no_contact_point']);
    expect(await reasonsOf(none, 'sms')).toEqual(['no_contact_point']);
    const listed = await donor({ phone: null, phones: [{ number: '555 0100', type: 'mobile' }] });
    expect(await reasonsOf(listed, 'phone')).toEqual([]);
    expect(await reasonsOf(listed, 'sms')).toEqual([]);
  });

  test('mail: the mailing_address, so a seasonal address only in season', async () => {
    const none = await donor({ address: null });
    expect(await reasonsOf(none, 'mail')).toEqual(['no_contact_point']);
    const summer = await donor({
      address: null,
      addresses: [
        { line1: '3 Via Roma', type: 'seasonal', seasonal_from: '06-01', seasonal_to: '08-31' },
        { line1: '5 Elm St', type: 'home', status: 'undeliverable' },
      ],
    });
    expect(await reasonsOf(summer, 'mail')).toEqual(['no_contact_point']);
    const winter = await donor({
      address: null,
      addresses: [
        { line1: '1 Ocean Drive', type: 'seasonal', seasonal_from: '12-01', seasonal_to: '02-28' },
      ],
    });
    expect(await reasonsOf(winter, 'mail')).toEqual([]);
  });
});

describe('consents', () => {
  test('a channel-wide opt-out wins over a purpose’s opt-in; a purpose’s opt-out counts for it alone', async () => {
    const id = await donor();
    await consent(id, { channel: 'email', purpose: 'newsletter', response: 'opt_in' });
    await consent(id, { channel: 'email', response: 'opt_out' });
    expect(await reasonsOf(id, 'email', 'newsletter')).toEqual(['opted_out']);
    expect(await reasonsOf(id, 'email')).toEqual(['opted_out']);

    const other = await donor();
    await consent(other, { channel: 'email', response: 'opt_in' });
    await consent(other, { channel: 'email', purpose: 'appeals', response: 'opt_out' });
    expect(await reasonsOf(other, 'email', 'appeals')).toEqual(['opted_out']);
    expect(await reasonsOf(other, 'email', 'newsletter')).toEqual([]);
    expect(await reasonsOf(other, 'email')).toEqual([]);
  });

  test('the latest by captured_at wins, even when recorded earlier', async () => {
    const id = await donor();
    await consent(id, {
      channel: 'email',
      response: 'opt_out',
      captured_at: '2026-10-01T10:00:00Z',
    });
    // Recorded later, captured earlier: the October opt-out stays the latest answer.
    await consent(id, {
      channel: 'email',
      response: 'opt_in',
      captured_at: '2026-09-01T10:00:00Z',
    });
    expect(await reasonsOf(id, 'email')).toEqual(['opted_out']);
    await consent(id, {
      channel: 'email',
      response: 'opt_in',
      captured_at: '2026-11-01T10:00:00Z',
    });
    expect(await reasonsOf(id, 'email')).toEqual([]);
  });

  test('the same captured_at: the later record wins', async () => {
    const id = await donor();
    const at = '2026-10-01T10:00:00Z';
    await consent(id, { channel: 'sms', response: 'opt_in', captured_at: at });
    await consent(id, { channel: 'sms', response: 'opt_out', captured_at: at });
    expect(await reasonsOf(id, 'sms')).toEqual(['opted_out']);
  });

  test('opt_in mode: a purpose’s opt-in or a channel-wide opt-in is consent; another purpose’s is not', async () => {
    const key = optIn.key;
    const id = await donor({}, key);
    await consent(id, { channel: 'email', purpose: 'newsletter', response: 'opt_in' }, key);
    expect(await reasonsOf(id, 'email', 'newsletter', key)).toEqual([]);
    expect(await reasonsOf(id, 'email', 'appeals', key)).toEqual(['no_opt_in']);
    expect(await reasonsOf(id, 'email', null, key)).toEqual(['no_opt_in']);
    await consent(id, { channel: 'email', response: 'opt_in' }, key);
    expect(await reasonsOf(id, 'email', 'appeals', key)).toEqual([]);
    // A channel-wide opt-out then refuses the channel, the purpose's opt-in notwithstanding.
    await consent(id, { channel: 'email', response: 'opt_out' }, key);
    expect(await reasonsOf(id, 'email', 'newsletter', key)).toEqual(['opted_out']);
    expect(await reasonsOf(id, 'email', null, key)).toEqual(['opted_out', 'no_opt_in']);
  });

  test('a change of consent_mode counts at once', async () => {
    const tenant = await service.createTenant('Switching College');
    const id = await donor({}, tenant.key);
    expect(await reasonsOf(id, 'phone', null, tenant.key)).toEqual([]);
    const mode = await service.call('PATCH', '/api/v1/institution', {
      key: tenant.key,
      body: { consent_mode: 'opt_in' },
    });
    expect(mode.status).toBe(200);
    expect(await reasonsOf(id, 'phone', null, tenant.key)).toEqual(['no_opt_in']);
  });
});

test('every reason together, in the spec’s order', async () => {
  const key = optIn.key;
  const id = await donor(
    {
      status: 'deceased',
      email: null,
      communication_restrictions: ['do_not_email'],
    },
    key,
  );
  await consent(id, { channel: 'email', response: 'opt_out' }, key);
  const response = await eligibility(id, 'channel=email&purpose=newsletter', key);
  expect(response.status).toBe(200);
  expect(response.body).toEqual({
    object: 'eligibility',
    donor_id: id,
    channel: 'email',
    purpose: 'newsletter',
    allowed: false,
    reasons: ['deceased', 'restricted', 'no_contact_point', 'opted_out', 'no_opt_in'],
  });
});

test('a blank purpose is none; purpose is trimmed', async () => {
  const id = await donor();
  expect((await eligibility(id, 'channel=mail&purpose=')).body.purpose).toBeNull();
  expect((await eligibility(id, 'channel=mail&purpose=%20news%20')).body.purpose).toBe('news');
});

describe('bad requests', () => {
  const expectError = async (path: string, status: number, code: string, param?: string) => {
    const response = await service.call('GET', path);
    expect(response.status).toBe(status);
    const { error } = response.body as unknown as ErrorEnvelope;
    expect(error.code).toBe(code);
    if (param) expect(error.param).toBe(param);
  };

  test('channel missing: 400 parameter_missing; a bad channel or purpose: 400 invalid_parameter', async () => {
    const id = await donor();
    await expectError(`/api/v1/donors/${id}/eligibility`, 400, 'parameter_missing', 'channel');
    await expectError(
      `/api/v1/donors/${id}/eligibility?purpose=news`,
      400,
      'parameter_missing',
      'channel',
    );
    await expectError(
      `/api/v1/donors/${id}/eligibility?channel=fax`,
      400,
      'invalid_parameter',
      'channel',
    );
    await expectError(
      `/api/v1/donors/${id}/eligibility?channel=`,
      400,
      'invalid_parameter',
      'channel',
    );
    await expectError(
      `/api/v1/donors/${id}/eligibility?channel=email&channel=sms`,
      400,
      'invalid_parameter',
      'channel',
    );
    await expectError(
      `/api/v1/donors/${id}/eligibility?channel=email&purpose=${'p'.repeat(61)}`,
      400,
      'invalid_parameter',
      'purpose',
    );
    await expectError(
      `/api/v1/donors/${id}/eligibility?channel=email&purpose=a%00b`,
      400,
      'invalid_parameter',
      'purpose',
    );
    await expectError(
      `/api/v1/donors/${id}/eligibility?channel=email&limit=1`,
      400,
      'invalid_parameter',
      'limit',
    );
    const ok = await eligibility(id, `channel=email&purpose=${'p'.repeat(60)}`);
    expect(ok.status).toBe(200);
  });

  test('another institution’s donor, a missing one and a bad id: 404', async () => {
    const other = await service.createTenant('Other College');
    const theirs = await donor({}, other.key);
    await expectError(
      `/api/v1/donors/${theirs}/eligibility?channel=email`,
      404,
      'resource_not_found',
    );
    await expectError(
      `/api/v1/donors/999999999/eligibility?channel=email`,
      404,
      'resource_not_found',
    );
    await expectError(`/api/v1/donors/abc/eligibility?channel=email`, 404, 'resource_not_found');
    const mine = await eligibility(theirs, 'channel=email', other.key);
    expect(mine.status).toBe(200);
  });

  test('a read writes nothing', async () => {
    const id = await donor();
    const before = await service.count('events');
    await eligibility(id, 'channel=email');
    expect(await service.count('events')).toBe(before);
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM consents WHERE donor_id = ${id}`,
      ),
    ).toBe(0);
  });
});
