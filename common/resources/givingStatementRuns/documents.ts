import archiver from 'archiver';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { sql } from 'slonik';
import { findInstitution } from '../../institutions.js';
import type { RecordDownloadDescriptor } from '../descriptor.js';
import { statementPdf } from '../givingStatements/document.js';
import { presentGivingStatement } from '../givingStatements/present.js';
import { givingStatementTable, type GivingStatementRow } from '../givingStatements/schema.js';
import { columnsOf, findRow } from '../table.js';
import { givingStatementRunTable } from './schema.js';

/** Statements read per query: a page of PDFs is made, then the next read. */
const PAGE = 50;

/**
 * GET /giving-statement-runs/{id}/documents.zip: every statement of the run as a PDF, in one zip,
 * for the mailing house. The archive is streamed as it is made: one statement is rendered at a
 * time, and the next only once the archive has taken the last (and the client has taken what
 * the archive wrote), so memory stays one PDF deep however large the run.
 */
export const runDocuments: RecordDownloadDescriptor = {
  name: 'documents.zip',
  contentType: 'application/zip',
  filename: (id) => `giving-statement-run-${id}.zip`,
  async open(db, institutionId, id) {
    const run = await findRow(db, givingStatementRunTable, institutionId, id);
    const institution = run && (await findInstitution(db, institutionId));
    if (!run || !institution) return null;
    return async (out) => {
      // PDFs are compressed already: the archive only stores them.
      const archive = archiver('zip', { store: true });
      const piped = pipeline(archive, out);
      // A client gone mid-way ends the pipeline: stop rendering rather than wait for it.
      const cutOff = piped.then(() => {
        throw new Error('the archive ended before it was finalised');
      });
      cutOff.catch(() => undefined);
      let after = 0;
      for (;;) {
        const page = (await db.any(sql.type(givingStatementTable.row)`
          SELECT ${columnsOf(givingStatementTable)} FROM giving_statements
          WHERE institution_id = ${institutionId} AND run_id = ${id} AND id > ${after}
          ORDER BY id LIMIT ${PAGE}`)) as readonly GivingStatementRow[];
        for (const row of page) {
          const pdf = await statementPdf(presentGivingStatement(row), institution.name);
          const entered = once(archive, 'entry');
          archive.append(pdf, { name: `giving-statement-${row.year}-${row.seq}.pdf` });
          await Promise.race([entered, cutOff]);
        }
        if (page.length < PAGE) break;
        after = page.at(-1)!.id;
      }
      await archive.finalize();
      await piped;
    };
  },
  text: {
    operationId: 'downloadGivingStatementRunDocuments',
    summary: 'Download every statement of a run as PDFs in one zip',
    description:
      'Every statement the run issued, each as the PDF `GET /giving-statements/{id}` answers with `Accept: application/pdf`, named `giving-statement-<number>.pdf`, in one zip archive (`application/zip`) streamed as it is made: for the mailing house. While the run is still `running` it holds the statements issued so far.',
  },
};
