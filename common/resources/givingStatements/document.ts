import type { CommonQueryMethods } from 'slonik';
import { addressLines, money, PrintableDocument } from '../../documents/pdf.js';
import { findInstitution } from '../../institutions.js';
import type { DocumentDescriptor } from '../descriptor.js';
import { findRow } from '../table.js';
import { presentGivingStatement } from './present.js';
import type { GivingStatementResponse } from './response.js';
import { givingStatementTable } from './schema.js';

/** The statement as printed: what GET answers, laid out for the donor. */
export function statementPdf(
  statement: GivingStatementResponse,
  institutionName: string,
): Promise<Buffer> {
  const title = `Giving statement ${statement.number}`;
  const pdf = new PrintableDocument(`${title} – ${institutionName}`);
  pdf.heading(institutionName);
  pdf.heading(title, 2);
  if (statement.status === 'superseded')
    pdf.paragraph(
      [
        `SUPERSEDED by statement ${statement.superseded_by_id}: this statement is no longer current.`,
      ],
      { color: '#c0392b', weight: 700 },
    );
  pdf.paragraph([
    `${statement.period === 'fiscal' ? 'Fiscal' : 'Calendar'} year ${statement.year}: ${statement.period_start} to ${statement.period_end}`,
    `Issued on ${statement.issued_on}`,
  ]);
  pdf.paragraph([statement.donor_name, ...addressLines(statement.donor_address)], { size: 11 });
  pdf.table(
    [
      { heading: 'Date', width: 70 },
      { heading: 'Gift', width: 50 },
      { heading: 'Receipt', width: 55 },
      { heading: 'Amount', width: 105, align: 'right' },
      { heading: 'Benefit', width: 95, align: 'right' },
      { heading: 'Deductible', width: 108, align: 'right' },
    ],
    statement.lines.map((line) => [
      line.gift_date,
      String(line.gift_id),
      line.receipt_number === null ? '' : String(line.receipt_number),
      money(line.amount, line.currency),
      money(line.benefit_amount, line.currency),
      money(line.deductible_amount, line.currency),
    ]),
  );
  pdf.table(
    [
      { heading: 'Total', width: 175 },
      { heading: 'Amount', width: 105, align: 'right' },
      { heading: '', width: 95 },
      { heading: 'Deductible amount', width: 108, align: 'right' },
    ],
    statement.totals.map((total) => [
      `Total in ${total.currency}`,
      money(total.amount, total.currency),
      '',
      money(total.deductible_amount, total.currency),
    ]),
  );
  pdf.paragraph(
    [
      `Total in ${statement.currency}, the base currency: ${money(statement.base_total, statement.currency)}`,
    ],
    {
      weight: 700,
    },
  );
  pdf.paragraph(
    [
      'Deductible amount: each gift net of refunds less the value of goods or services received; nothing for gifts in kind.',
    ],
    { size: 8, color: '#555555' },
  );
  return pdf.finish();
}

export const givingStatementDocument: DocumentDescriptor = {
  async render(db: CommonQueryMethods, institutionId: number, id: number) {
    const row = await findRow(db, givingStatementTable, institutionId, id);
    const institution = row && (await findInstitution(db, institutionId));
    if (!row || !institution) return null;
    return statementPdf(presentGivingStatement(row), institution.name);
  },
  filename: (id) => `giving-statement-${id}.pdf`,
  description:
    'the statement as a PDF (tagged, text extractable, fonts embedded): the institution’s name, the number, the donor’s frozen name and address, each line with its deductible amount, the totals per currency with their deductible amounts, and the base total; a superseded statement says so.',
};
