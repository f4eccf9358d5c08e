// A client generated from the document with openapi-typescript type-checks what a client must
// send: a create with only its required fields, a cleared field, a report's required filter.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { routeTable } from '../api/routes.js';
import { buildOpenApiDocument } from '../common/openapi/document.js';

const client = `
import type { components, paths } from './schema.js';
type Schemas = components['schemas'];

// The least a client must send: each create's required fields, nothing else.
export const donor: Schemas['DonorCreate'] = { role: 'Individual' };
export const gift: Schemas['GiftCreate'] = { donor_id: 1, amount: 10, subject: 'Gift', gift_date: '2026-01-01' };
export const fund: Schemas['FundCreate'] = { name: 'Fund', code: 'FUND' };
export const user: Schemas['UserCreate'] = { email: 'a@example.org', first_name: 'A', last_name: 'B' };
export const cycle: Schemas['AwardCycleCreate'] = { name: 'C', starts_on: '2026-01-01', ends_on: '2026-02-01' };
export const student: Schemas['StudentCreate'] = { student_number: 'S-1', first_name: 'A', last_name: 'B' };
export const scholarship: Schemas['ScholarshipCreate'] = { name: 'S', fund_id: 1 };
export const award: Schemas['AwardCreate'] = { award_cycle_id: 1, scholarship_id: 1, student_id: 1, amount: 1 };
export const tag: Schemas['TagCreate'] = { name: 'T' };
// An update sends any subset; null or blank text clears a nullable field.
export const nothing: Schemas['DonorUpdate'] = {};
export const cleared: Schemas['DonorUpdate'] = { assigned_user_id: '', address: null };
// @ts-expect-error a create must send its required fields
export const incomplete: Schemas['GiftCreate'] = { donor_id: 1 };

type AwardedQuery = NonNullable<paths['/api/v1/scholarships/awarded-students']['get']['parameters']['query']>;
export const report: AwardedQuery = { award_cycle_id: 1 };
// @ts-expect-error the first reporting request must name its award cycle
export const noCycle: AwardedQuery = {};

// Responses carry every field, defaulted ones included.
export const giftType = (received: Schemas['Gift']): string => received.type;
`;

test('the generated types accept what a client must send and refuse what it must not', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'dgs-client-'));
  try {
    const document = buildOpenApiDocument(routeTable());
    const ast = await openapiTS(document as unknown as Parameters<typeof openapiTS>[0]);
    await writeFile(path.join(dir, 'schema.ts'), astToString(ast));
    await writeFile(path.join(dir, 'client.ts'), client);
    const program = ts.createProgram([path.join(dir, 'client.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: [],
      skipLibCheck: true,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      );
    expect(problems).toEqual([]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
