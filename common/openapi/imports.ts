import { importDuplicateList, importErrorList, importList } from '../imports/list.js';
import {
  importResponse,
  importRowDuplicatesResponse,
  importRowErrorResponse,
} from '../imports/schema.js';
import { knownColumns } from '../imports/columns.js';
import { listEnvelope } from '../resources/responseFields.js';
import type { ErrorCode } from './errorCatalogue.js';
import { schemaRef, type JsonSchema } from './jsonSchema.js';
import {
  anyError,
  authentication,
  bodyWriteErrors,
  errorResponses,
  ourSide,
  recordWriteErrors,
  success,
  type Needs,
} from './responses.js';
import {
  filterParameters,
  headerRef,
  idPathParameter,
  pageParameters,
  rateLimitHeaders,
  requestIdHeader,
  writeParameters,
} from './parameters.js';
import type { EndpointDoc } from './routeDoc.js';

type ImportOperation = Extract<EndpointDoc, { kind: 'import' }>['operation'];

const tags = ['Imports'];

const query = (name: string, description: string, schema: JsonSchema): JsonSchema => ({
  name,
  in: 'query',
  required: name === 'resource',
  description,
  schema,
});

const createDescription = [
  'Uploads a file of donors or gifts and creates its import, answered 202: the workers judge every row with exactly the rules of `POST /donors` or `POST /gifts` (the same error codes and params), then write the valid ones in chunks, each chunk in one transaction with its records’ events, exactly once whatever fails. Follow it with `GET /imports/{id}` (`rows_processed` advances) and `GET /imports/{id}/errors`.',
  '**CSV** (`Content-Type: text/csv`): UTF-8 (a BOM is fine), a header row of field names, then one row per record; quoted fields as RFC 4180. An empty cell is a field not sent. Nested fields are columns such as `address.city` and `tribute.notify.email` (a nested object none of whose cells is filled is not sent); `tag_ids` as `1;2;3`; a donor’s listed `emails`, `phones` and `addresses` one cell per field of each element, `emails.N.address`, `phones.N.type`, `addresses.N.seasonal_from` (N from 0 to 9; the cells of one N build one element, an N with no cell filled is none, and the elements keep N order with gaps closed; an error names the column its value came from), or each list whole as a JSON cell (a row filling both forms of one list fails `not_allowed` on the JSON column); a gift’s `designations` as `fund_code:amount;...` (`GEN:60;ATH:40`), with funds named by their code. Donor rows may name their household by `household_external_id` instead of `household_id`: an existing household of the institution, or a `Household` row earlier in the same file (such a file is written chunk after chunk, in file order; a member of a household row that has errors fails `reference_not_found` too); an unknown external id, or another institution’s, is the row’s `reference_not_found` on that column. Gift rows name their donor by `donor_id`, `donor_external_id` or `donor_email`, and may name their campaign and appeal by `campaign_code` and `appeal_code` (any case; an unknown code is the row’s `reference_not_found` on that column, and what `POST /gifts` refuses of the campaign or appeal it names, such as a closed campaign or an appeal of another campaign, is reported on that column too). A row in another currency than the base takes its `exchange_rate` column, else the rate on file for its `gift_date` (none: `exchange_rate_missing` on `currency`), as `POST /gifts`. An unknown column is 422 `validation_failed` (param `columns.N`), as are text that is not UTF-8, a quote that never closes and a row with more cells than the header. Templates: `GET /imports/templates/donors.csv` and `gifts.csv`.',
  '**JSON** (`Content-Type: application/json`): `{"rows": [{...}, ...]}`, each row the body of the single-record write (plus `donor_external_id` / `donor_email` / `campaign_code` / `appeal_code` for gifts, `household_external_id` for donors). Its rows name at most 200 distinct keys between them, as a CSV has at most 200 columns; more is 422 `validation_failed` (param `file`).',
  'At most `IMPORT_MAX_BYTES` (default 50 MiB; 413 `payload_too_large`, nothing stored) and `IMPORT_MAX_ROWS` rows (default 500,000; 413). Gift rows whose `amount`s add up to more than 99999999999999.99 are 422 `validation_failed` (param `file`).',
  '`dry_run=true` validates every row and commits nothing: the import ends `validated`, and `POST /imports/{id}/commit` imports that same file without uploading it again. An `Idempotency-Key` works as on any write: the same key with the same file and choices replays the first answer (and stores nothing new).',
].join('\n\n');

function createOperation(needs: Needs): JsonSchema {
  needs.responses.set('Import', importResponse);
  needs.bodies.set('ImportRows', {
    type: 'object',
    description:
      'The rows of a JSON import: each the body of the single-record write (`POST /donors` or `POST /gifts`), plus `donor_external_id` or `donor_email`, `campaign_code` and `appeal_code` for gifts.',
    required: ['rows'],
    additionalProperties: false,
    properties: {
      rows: { type: 'array', items: { type: 'object' }, minItems: 1, maxItems: 500_000 },
    },
  });
  return {
    operationId: 'createImport',
    summary: 'Upload a file to import',
    description: createDescription,
    tags,
    parameters: [
      query('resource', 'What the rows are.', { type: 'string', enum: ['donors', 'gifts'] }),
      query(
        'mode',
        '`skip_invalid` (default): valid rows are written, invalid ones reported. `all_or_nothing`: any invalid row fails the import and nothing is written.',
        { type: 'string', enum: ['skip_invalid', 'all_or_nothing'] },
      ),
      query(
        'on_match',
        'Donor rows whose `external_id` (else `email`) names an existing donor: `skip` the row, `update` that donor with the row (as `PATCH /donors/{id}`), or report the row as `already_in_use` (`error`, default).',
        { type: 'string', enum: ['skip', 'update', 'error'] },
      ),
      query(
        'expected_rows',
        'Control total: the file’s data rows. A mismatch fails the import before any row is judged.',
        {
          type: 'string',
          pattern: '^\\d{1,9}$',
        },
      ),
      query(
        'expected_amount',
        'Control total (gifts): the sum of the rows’ `amount` as written in the file, whatever each row’s `currency` (`100` EUR and `50` USD add up to `150`), at most 99999999999999.99 (more is 400 `invalid_parameter`). It checks that the file was read whole; it is not a money total (that is the gifts’ `base_amount`). A mismatch fails the import before any row is judged.',
        { type: 'string', pattern: '^\\d{1,14}(\\.\\d{1,2})?$' },
      ),
      ...writeParameters,
    ],
    requestBody: {
      required: true,
      content: {
        'text/csv': {
          schema: { type: 'string' },
          example:
            'external_id,role,first_name,last_name,email\nA-1001,Individual,Ada,Lovelace,ada@example.org\n',
        },
        'application/json': {
          schema: schemaRef('ImportRows'),
          example: {
            rows: [
              {
                role: 'Individual',
                first_name: 'Ada',
                last_name: 'Lovelace',
                email: 'ada@example.org',
              },
            ],
          },
        },
      },
    },
    responses: {
      '202': success(
        'The import, queued for the workers (or failed at once by a control total).',
        schemaRef('Import'),
        {
          Location: headerRef('Location'),
          'Idempotent-Replayed': headerRef('IdempotentReplayed'),
        },
      ),
      ...errorResponses(bodyWriteErrors({ query: ['parameter_missing'] }), needs),
      ...anyError,
    },
  };
}

const readErrors = (extra: ErrorCode[] = []): ErrorCode[] => [
  'invalid_parameter',
  ...extra,
  ...authentication,
  'resource_not_found',
  ...ourSide,
];

function action(name: 'commit' | 'cancel', needs: Needs): JsonSchema {
  needs.responses.set('Import', importResponse);
  const commit = name === 'commit';
  const body = commit ? 'ImportCommit' : 'ImportCancel';
  needs.bodies.set(body, {
    type: 'object',
    description: 'No fields: the body is `{}`.',
    additionalProperties: false,
    maxProperties: 0,
  });
  return {
    operationId: commit ? 'commitImport' : 'cancelImport',
    summary: commit ? 'Import a validated dry run' : 'Cancel an import',
    description:
      (commit
        ? 'Imports the file of a `validated` dry-run import, without uploading it again: the import moves to `importing`, then `completed`. Any other status is 409 `invalid_state_transition`. The body is `{}`.'
        : 'Stops an unfinished import between chunks: what committed stays, and `failure.message` says how far it got. A finished import is 409 `invalid_state_transition`. The body is `{}`.') +
      '\n\nSupports a dry run (`dry_run` / `Dry-Run`) and an `Idempotency-Key`: see the introduction.',
    tags,
    parameters: [idPathParameter('import'), ...writeParameters],
    requestBody: {
      required: true,
      content: {
        'application/json': { schema: schemaRef(body), example: {} },
      },
    },
    responses: {
      '200': success(
        'The import after the change; on a dry run as it would be.',
        schemaRef('Import'),
        {
          'Idempotent-Replayed': headerRef('IdempotentReplayed'),
        },
      ),
      ...errorResponses(recordWriteErrors(['invalid_state_transition']), needs),
      ...anyError,
    },
  };
}

const csvResponse = (description: string, example: string): JsonSchema => ({
  description,
  headers: { ...requestIdHeader, ...rateLimitHeaders },
  content: { 'text/csv': { schema: { type: 'string' }, example } },
});

/** The OpenAPI operation of one imports route. */
export function importOperation(operation: ImportOperation, needs: Needs): JsonSchema {
  switch (operation) {
    case 'create':
      return createOperation(needs);
    case 'commit':
    case 'cancel':
      return action(operation, needs);
    case 'list':
      needs.responses.set('Import', importResponse);
      needs.responses.set('ImportList', listEnvelope(importList.endpoint, importResponse));
      return {
        operationId: 'listImports',
        summary: 'List imports',
        description:
          'The institution’s imports, newest first. Cursor pagination: see the introduction.',
        tags,
        parameters: [...pageParameters, ...filterParameters(importList, {})],
        responses: {
          '200': success('One page of the list.', schemaRef('ImportList')),
          ...errorResponses(
            readErrors(['invalid_cursor']).filter((code) => code !== 'resource_not_found'),
            needs,
          ),
          ...anyError,
        },
      };
    case 'retrieve':
      needs.responses.set('Import', importResponse);
      return {
        operationId: 'retrieveImport',
        summary: 'Retrieve an import',
        description: 'One import, with its progress: `rows_processed` advances while it runs.',
        tags,
        parameters: [idPathParameter('import')],
        responses: {
          '200': success('The import.', schemaRef('Import')),
          ...errorResponses(readErrors(), needs),
          ...anyError,
        },
      };
    case 'errors':
      needs.responses.set('ImportRowError', importRowErrorResponse);
      needs.responses.set(
        'ImportRowErrorList',
        listEnvelope(importErrorList.endpoint, importRowErrorResponse),
      );
      return {
        operationId: 'listImportRowErrors',
        summary: 'List an import’s failed rows',
        description:
          'Each failed row once, in file order (the header is row 1), with every problem found in it: the codes and params of the single-record write, plus `already_in_use` for a donor row repeating an earlier row’s email or external id. Cursor pagination: see the introduction.',
        tags,
        parameters: [idPathParameter('import'), ...pageParameters],
        responses: {
          '200': success('One page of the list.', schemaRef('ImportRowErrorList')),
          ...errorResponses(readErrors(['invalid_cursor']), needs),
          ...anyError,
        },
      };
    case 'duplicates':
      needs.responses.set('ImportRowDuplicates', importRowDuplicatesResponse);
      needs.responses.set(
        'ImportRowDuplicatesList',
        listEnvelope(importDuplicateList.endpoint, importRowDuplicatesResponse),
      );
      return {
        operationId: 'listImportRowDuplicates',
        summary: 'List an import’s donor rows that have duplicate candidates',
        description:
          'Each donor row written (created or updated) whose donor had candidates by the matching rule (see `GET /duplicates`) once its chunk was written, in file order: the row number, the donor, and its candidates as they are now. A candidate is not an error: the row is written. A dry run writes no row, so it lists none. Cursor pagination: see the introduction.',
        tags,
        parameters: [idPathParameter('import'), ...pageParameters],
        responses: {
          '200': success('One page of the list.', schemaRef('ImportRowDuplicatesList')),
          ...errorResponses(readErrors(['invalid_cursor']), needs),
          ...anyError,
        },
      };
    case 'errors-csv':
      return {
        operationId: 'downloadImportErrors',
        summary: 'Download an import’s failed rows as CSV',
        description:
          "The failed rows as sent, under the header as sent, plus an `errors` column: ready to fix and upload again. A cell that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`) is prefixed with `'` here, so that opening the file runs nothing; the records keep the text as sent.",
        tags,
        parameters: [idPathParameter('import')],
        responses: {
          '200': csvResponse(
            'The failed rows.',
            'first_name,email,errors\r\nAda,not-an-email,email: must be a valid email address (invalid_format)\r\n',
          ),
          ...errorResponses(readErrors(), needs),
          ...anyError,
        },
      };
    case 'template-donors':
    case 'template-gifts': {
      const resource = operation === 'template-donors' ? 'donors' : 'gifts';
      return {
        operationId: `download${resource === 'donors' ? 'Donor' : 'Gift'}ImportTemplate`,
        summary: `Download the CSV template of ${resource}`,
        description: `The header row of a ${resource} import file: ${knownColumns(resource).join(', ')}. See docs/imports.md for each column.`,
        tags,
        parameters: [],
        responses: {
          '200': csvResponse('The header row.', `${knownColumns(resource).join(',')}\r\n`),
          ...errorResponses(['invalid_parameter', ...authentication, ...ourSide], needs),
          ...anyError,
        },
      };
    }
  }
}
