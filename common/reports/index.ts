import type {
  InstitutionReadDescriptor,
  ReadParameter,
  RecordReadDescriptor,
  ReportDescriptor,
} from '../resources/descriptor.js';
import {
  firstTimeDonorList,
  lybuntList,
  firstTimeDonorRowResponse,
  reportRowResponse,
  sybuntList,
  sybuntRowResponse,
} from './donorReports.js';
import { parseFiscalYear, parseLevel, type Level } from './fiscalYear.js';
import { findGivingSummary, givingSummaryResponse } from './givingSummary.js';
import { findRetention, retentionResponse } from './retention.js';

/**
 * The fiscal-year reports a development office is judged by (fundraising.md §5): three cursor
 * lists and donor retention under /reports, and a donor's giving summary. Each is computed
 * when asked from the counted giving per month that every write keeps current
 * (migration 1735020000000_giving-months.sql): none waits for a batch, and a change of
 * `fiscal_year_start_month` changes the next answer.
 */

const TAG = 'Fundraising reports';
const TAG_DESCRIPTION =
  'Who gave last year but not this year, who lapsed, who is new, and how many donors were kept, by fiscal year (named by the year it ends in; `PATCH /institution` sets the month it starts). A donor counts in a year with a counted gift in it: not voided, its base amount net of refunds above 0, hard credit to its donor; pledges count through their payments only. `level=household` counts a household and its current members as one donor. Current after every write.';

const levelNote =
  '`donor` (the default) or `household`: a household and its current members as one row (the household’s), each gift once; a donor in no household stands alone.';

const fiscalYearNote = 'The fiscal year, named by the calendar year it ends in (`2027`).';

const rowNotes = { fiscal_year: fiscalYearNote, level: levelNote };

export const donorReports: readonly ReportDescriptor[] = [
  {
    permission: 'reports',
    path: '/reports/lybunt',
    list: lybuntList,
    item: reportRowResponse,
    text: {
      tag: TAG,
      tagDescription: TAG_DESCRIPTION,
      component: 'LybuntRow',
      summary: 'List LYBUNT donors',
      description:
        'Donors who counted in the fiscal year before `fiscal_year` and not in `fiscal_year` (“last year but unfortunately not this year”), newest donor first.',
      filterNotes: rowNotes,
    },
  },
  {
    permission: 'reports',
    path: '/reports/sybunt',
    list: sybuntList,
    item: sybuntRowResponse,
    text: {
      tag: TAG,
      tagDescription: TAG_DESCRIPTION,
      component: 'SybuntRow',
      summary: 'List SYBUNT donors',
      description:
        'Donors who counted in some fiscal year before the one before `fiscal_year`, and in neither that year nor `fiscal_year` (“some year but unfortunately not this year”), newest donor first. LYBUNT donors are not included.',
      filterNotes: rowNotes,
    },
  },
  {
    permission: 'reports',
    path: '/reports/first-time-donors',
    list: firstTimeDonorList,
    item: firstTimeDonorRowResponse,
    text: {
      tag: TAG,
      tagDescription: TAG_DESCRIPTION,
      component: 'FirstTimeDonorRow',
      summary: 'List first-time donors',
      description:
        'Donors whose first counted gift ever falls in `fiscal_year`, newest donor first.',
      filterNotes: rowNotes,
    },
  },
];

const level: ReadParameter = {
  required: false,
  parse: parseLevel,
  schema: { type: 'string', enum: ['donor', 'household'], default: 'donor' },
  description: levelNote,
};

const levelOf = (query: Record<string, string | null>): Level =>
  query.level === 'household' ? 'household' : 'donor';

export const retentionReport: InstitutionReadDescriptor = {
  permission: 'reports',
  path: '/reports/retention',
  query: {
    fiscal_year: {
      required: true,
      parse: parseFiscalYear,
      schema: { type: 'integer', minimum: 1001, maximum: 9998, example: 2027 },
      description: fiscalYearNote,
    },
    level,
  },
  read: (db, institutionId, query) =>
    findRetention(db, institutionId, Number(query.fiscal_year), levelOf(query)),
  response: retentionResponse,
  text: {
    tag: TAG,
    component: 'Retention',
    operationId: 'retrieveRetention',
    summary: 'Retrieve donor retention',
    description:
      'Donor retention in `fiscal_year` against the year before, with the Fundraising Effectiveness Project’s definitions: retained (counted in both), lapsed (the year before, not this one), new (first ever this year), recaptured (this year, not the year before, some year earlier), and each retained donor upgraded, downgraded or unchanged by its totals.',
  },
};

export const givingSummaryRead: RecordReadDescriptor = {
  name: 'giving-summary',
  query: { level },
  read: (db, institutionId, id, query) => findGivingSummary(db, institutionId, id, levelOf(query)),
  response: givingSummaryResponse,
  text: {
    component: 'GivingSummary',
    operationId: 'retrieveDonorGivingSummary',
    summary: 'Retrieve a donor’s giving summary',
    description:
      'The donor’s counted giving by fiscal year, every year: lifetime total, first, last and largest gift, years given, consecutive years and the best year. At `level=household`, that of the donor’s household (the donor itself when in none) with its current members.',
  },
};
