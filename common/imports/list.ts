import { sql } from 'slonik';
import { z } from 'zod';
import { enumFilter, type ListSpec } from '../pagination/listSpec.js';
import { candidatesJson } from '../resources/duplicates/list.js';
import { importColumns } from './queries.js';
import {
  importResources,
  importRow,
  importStatuses,
  presentImport,
  type ImportRow,
  type ImportRowDuplicatesResponse,
} from './schema.js';

/** GET /imports: newest first. */
export const importList: ListSpec<ImportRow> = {
  endpoint: '/api/v1/imports',
  from: sql.fragment`imports`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns: importColumns,
  row: importRow,
  keyOf: (row) => row.id,
  present: presentImport,
  filters: {
    status: enumFilter(sql.fragment`status`, importStatuses),
    resource: enumFilter(sql.fragment`resource`, importResources),
  },
};

const errorRow = z.object({
  row_number: z.number(),
  errors: z.array(
    z.object({ param: z.string().nullable(), code: z.string(), message: z.string() }),
  ),
});

/**
 * The engine pages newest first, by a key that falls as rows go on: the key of a row error is
 * its distance from the last possible row number, so the list reads in file order.
 */
const ROW_CEILING = 2_147_483_647;

/** GET /imports/{id}/errors: the failed rows, in file order. */
export const importErrorList: ListSpec<z.infer<typeof errorRow>> = {
  endpoint: '/api/v1/imports/:id/errors',
  from: sql.fragment`import_row_errors`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`(${ROW_CEILING} - row_number)`,
  columns: sql.fragment`row_number, errors`,
  row: errorRow,
  keyOf: (row) => ROW_CEILING - row.row_number,
  present: (row) => ({ object: 'import_row_error', row: row.row_number, errors: row.errors }),
  filters: {},
};

export const importErrorsOfImport = {
  list: importErrorList,
  parent: { table: 'imports', label: 'import' },
  ofParent: (id: number) => sql.fragment`import_id = ${id}`,
};

const duplicateRow = z.object({
  row_number: z.number(),
  donor_id: z.number(),
  candidates: z.custom<ImportRowDuplicatesResponse['candidates']>(),
});

/** GET /imports/{id}/duplicates: the donor rows written with candidates, in file order. */
export const importDuplicateList: ListSpec<z.infer<typeof duplicateRow>> = {
  endpoint: '/api/v1/imports/:id/duplicates',
  from: sql.fragment`import_row_duplicates`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`(${ROW_CEILING} - row_number)`,
  columns: sql.fragment`row_number, donor_id, ${candidatesJson(
    sql.fragment`import_row_duplicates.institution_id`,
    sql.fragment`import_row_duplicates.donor_id`,
  )} AS candidates`,
  row: duplicateRow,
  keyOf: (row) => ROW_CEILING - row.row_number,
  present: (row) => ({
    object: 'import_row_duplicates',
    row: row.row_number,
    donor_id: row.donor_id,
    candidates: row.candidates,
  }),
  filters: {},
};

export const importDuplicatesOfImport = {
  list: importDuplicateList,
  parent: { table: 'imports', label: 'import' },
  ofParent: (id: number) => sql.fragment`import_id = ${id}`,
};
