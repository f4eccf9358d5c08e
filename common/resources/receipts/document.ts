import type { CommonQueryMethods } from 'slonik';
import { addressLines, money, PrintableDocument } from '../../documents/pdf.js';
import { findInstitution } from '../../institutions.js';
import type { DocumentDescriptor } from '../descriptor.js';
import { findRow } from '../table.js';
import { presentReceipt } from './present.js';
import type { ReceiptResponse } from './response.js';
import { receiptTable } from './schema.js';

/** The receipt as printed; a void one carries VOID across the page and says why. */
export function receiptPdf(receipt: ReceiptResponse, institutionName: string): Promise<Buffer> {
  const title = `Receipt ${receipt.number}`;
  const pdf = new PrintableDocument(`${title} – ${institutionName}`);
  if (receipt.status === 'void') pdf.stamp('VOID');
  pdf.heading(institutionName);
  pdf.heading(`${title}${receipt.status === 'void' ? ' (VOID)' : ''}`, 2);
  if (receipt.status === 'void')
    pdf.paragraph(
      [
        `VOID: this receipt was withdrawn on ${receipt.voided_at?.slice(0, 10) ?? ''} and is not valid for tax purposes.`,
        ...(receipt.void_reason ? [`Reason: ${receipt.void_reason}`] : []),
      ],
      { color: '#c0392b', weight: 700 },
    );
  pdf.paragraph([`Issued on ${receipt.issued_on}`, `Gift ${receipt.gift_id}`]);
  pdf.paragraph([receipt.donor_name, ...addressLines(receipt.donor_address)], { size: 11 });
  pdf.table(
    [
      { heading: '', width: 240 },
      { heading: receipt.currency, width: 243, align: 'right' },
    ],
    [
      ['Amount received', money(receipt.amount, receipt.currency)],
      ['Value of goods or services received', money(receipt.benefit_amount, receipt.currency)],
      ['Deductible amount', money(receipt.deductible_amount, receipt.currency)],
    ],
  );
  return pdf.finish();
}

export const receiptDocument: DocumentDescriptor = {
  async render(db: CommonQueryMethods, institutionId: number, id: number) {
    const row = await findRow(db, receiptTable, institutionId, id);
    const institution = row && (await findInstitution(db, institutionId));
    if (!row || !institution) return null;
    return receiptPdf(presentReceipt(row), institution.name);
  },
  filename: (id) => `receipt-${id}.pdf`,
  description:
    'the receipt as a PDF (tagged, text extractable, fonts embedded): the institution’s name, the number, the donor’s frozen name and address, the amount, the benefit and the deductible amount; a void receipt is marked VOID across the page, with its reason.',
};
