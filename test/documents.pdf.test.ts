// Printable documents (fundraising.md §6, issue 32): GET of a receipt or a giving statement with
// `Accept: application/pdf` answers a real PDF, read back here with pdfjs-dist as a reader would.
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import type { ErrorEnvelope } from './helpers/threeWays.js';

type Json = Record<string, unknown>;

let service: TestService;
let tenant: Tenant;
let stranger: Tenant;

const NAME = 'Zoë Groß-Łukasiewicz Жуков 李小龙';
const INSTITUTION = 'Université Saint-Étienne';

const call = <T = Json>(method: string, path: string, body?: Json) =>
  service.call<T>(method, `/api/v1${path}`, { key: tenant.key, body });

/** The raw answer of a GET with an Accept header (a PDF is not JSON, so not service.call). */
const fetchAs = async (path: string, accept: string, key = tenant.key) => {
  const response = await fetch(`${service.url}/api/v1${path}`, {
    headers: { 'X-Service-API-Key': key, Accept: accept },
  });
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
};

interface PdfRead {
  text: string;
  pages: number;
  title: string | undefined;
  marked: boolean;
  structured: boolean;
}

/** The text of every page, as a reader extracts it, and what makes the PDF accessible. */
async function readPdf(bytes: Uint8Array): Promise<PdfRead> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const document = await pdfjs.getDocument({ data: bytes, useSystemFonts: false }).promise;
  let text = '';
  let structured = false;
  for (let number = 1; number <= document.numPages; number += 1) {
    const page = await document.getPage(number);
    const content = await page.getTextContent();
    for (const item of content.items)
      if ('str' in item) text += item.str + (item.hasEOL ? '\n' : '');
    structured ||= Boolean(await page.getStructTree());
  }
  const { info } = (await document.getMetadata()) as { info: { Title?: string } };
  const marked = Boolean((await document.getMarkInfo())?.Marked);
  const pages = document.numPages;
  await document.destroy();
  return { text: text.replace(/\s+/g, ' '), pages, title: info.Title, marked, structured };
}

beforeAll(async () => {
  service = await startTestService();
  tenant = await service.createTenant(INSTITUTION, 'USD');
  stranger = await service.createTenant('Elsewhere College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

async function donorWithGifts() {
  const donor = await created<{ id: number }>(
    call('POST', '/donors', {
      role: 'Individual',
      first_name: 'Zoë',
      last_name: 'Groß-Łukasiewicz Жуков 李小龙',
      email: `pdf${Date.now()}@example.org`,
      address: { line1: 'Ulica Długa 5', city: 'Gdańsk', postal_code: '80-827', country: 'PL' },
    }),
  );
  const gift = (body: Json) =>
    created<{ id: number }>(
      call('POST', '/gifts', { donor_id: donor.id, subject: 'Annual fund', ...body }),
    );
  return { donor, gift };
}

test('a giving statement as a PDF: the institution, number, frozen name and address, each line, totals and deductible amounts, in any script', async () => {
  const { donor, gift } = await donorWithGifts();
  await gift({ amount: 1250.5, benefit_amount: 50, gift_date: '2025-03-14' });
  await gift({ amount: 300, currency: 'EUR', exchange_rate: 1.1, gift_date: '2025-09-01' });
  await gift({ amount: 75, type: 'in_kind', gift_date: '2025-10-01' });
  const statement = await created<{ id: number; number: string }>(
    call('POST', '/giving-statements', { donor_id: donor.id, year: 2025 }),
  );

  const { response, bytes } = await fetchAs(
    `/giving-statements/${statement.id}`,
    'application/pdf',
  );
  expect(response.status).toBe(200);
  expect(response.headers.get('Content-Type')).toBe('application/pdf');
  expect(response.headers.get('Content-Disposition')).toBe(
    `inline; filename="giving-statement-${statement.id}.pdf"`,
  );
  expect(Buffer.from(bytes.subarray(0, 5)).toString()).toBe('%PDF-');
  // The fonts are embedded (subsets), never referred to by name for the reader to find.
  expect(Buffer.from(bytes).toString('latin1')).toMatch(/\/FontFile2/);

  const pdf = await readPdf(bytes);
  expect(pdf.pages).toBe(1);
  expect(pdf.title).toBe(`Giving statement ${statement.number} – ${INSTITUTION}`);
  expect(pdf.marked).toBe(true);
  expect(pdf.structured).toBe(true);
  for (const expected of [
    INSTITUTION,
    `Giving statement ${statement.number}`,
    'Calendar year 2025: 2025-01-01 to 2025-12-31',
    NAME,
    'Ulica Długa 5',
    'Gdańsk 80-827',
    '2025-03-14',
    '1,250.50 USD',
    '1,200.50 USD',
    '300.00 EUR',
    '75.00 USD',
    'Total in USD 1,325.50 USD 1,200.50 USD',
    'Total in EUR 300.00 EUR 300.00 EUR',
    // 1,250.50 + 330.00 + 75.00
    'base currency: 1,655.50 USD',
    'Deductible amount',
  ])
    expect(pdf.text).toContain(expected);

  // JSON stays the default, and is what an Accept that takes both gets.
  for (const accept of ['application/json', '*/*', 'application/json, application/pdf;q=0.5']) {
    const json = await fetchAs(`/giving-statements/${statement.id}`, accept);
    expect(json.response.headers.get('Content-Type')).toMatch(/^application\/json/);
  }
});

test('a receipt as a PDF; a void one is marked VOID with its reason', async () => {
  const { gift } = await donorWithGifts();
  const { id: giftId } = await gift({ amount: 500, benefit_amount: 120, gift_date: '2025-05-05' });
  const receipt = await created<{ id: number; number: number }>(
    call('POST', '/receipts', { gift_id: giftId, issued_on: '2025-05-06' }),
  );
  const issued = await fetchAs(`/receipts/${receipt.id}`, 'application/pdf');
  expect(issued.response.status).toBe(200);
  const text = (await readPdf(issued.bytes)).text;
  for (const expected of [
    INSTITUTION,
    `Receipt ${receipt.number}`,
    NAME,
    'Ulica Długa 5',
    '500.00 USD',
    '120.00 USD',
    'Deductible amount 380.00 USD',
  ])
    expect(text).toContain(expected);
  expect(text).not.toContain('VOID');

  expect(
    (await call('POST', `/receipts/${receipt.id}/void`, { reason: 'Wrong address' })).status,
  ).toBe(200);
  const voided = await readPdf((await fetchAs(`/receipts/${receipt.id}`, 'application/pdf')).bytes);
  expect(voided.text).toContain('VOID');
  expect(voided.text).toContain(`Receipt ${receipt.number} (VOID)`);
  expect(voided.text).toContain('Reason: Wrong address');
});

test('an Accept of neither JSON nor PDF is 406 in the error envelope; another institution’s document is 404', async () => {
  const { donor, gift } = await donorWithGifts();
  await gift({ amount: 10, gift_date: '2025-01-02' });
  const statement = await created<{ id: number }>(
    call('POST', '/giving-statements', { donor_id: donor.id, year: 2025 }),
  );
  const refused = await service.call<ErrorEnvelope>(
    'GET',
    `/api/v1/giving-statements/${statement.id}`,
    {
      key: tenant.key,
      headers: { Accept: 'text/html' },
    },
  );
  expect(refused.status).toBe(406);
  expect(refused.body.error).toMatchObject({
    type: 'invalid_request_error',
    code: 'not_acceptable',
  });
  const receipts = await service.call<ErrorEnvelope>('GET', '/api/v1/receipts/1', {
    key: tenant.key,
    headers: { Accept: 'image/png' },
  });
  expect(receipts.status).toBe(406);

  for (const path of [`/giving-statements/${statement.id}`, '/giving-statements/999999']) {
    const theirs = await fetchAs(path, 'application/pdf', stranger.key);
    expect(theirs.response.status).toBe(404);
    expect(theirs.response.headers.get('Content-Type')).toMatch(/^application\/json/);
    expect(JSON.parse(Buffer.from(theirs.bytes).toString()).error.code).toBe('resource_not_found');
  }
});
