import { sql, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { errors } from '../../errors.js';
import type { FilterSpec, ListSpec, SortValue } from '../../pagination/listSpec.js';
import type { RecordListDescriptor } from '../descriptor.js';
import { collectionList, columnsOf } from '../table.js';
import { duplicateCandidateResponse } from './response.js';
import { presentCandidate, presentDuplicatePair } from './present.js';
import {
  duplicateIdentity,
  duplicatePairTable,
  MAX_IMPORT_ROW_CANDIDATES,
  type DuplicatePairRow,
} from './schema.js';

/** Highest score first; among equal scores, the newest pair first. */
const byScore: SortValue = { column: sql.fragment`score`, type: 'numeric', direction: 'desc' };

/** A dismissed pair is kept only so that it never returns: no list shows it. */
const open = sql.fragment`dismissed_at IS NULL`;

const minScore: FilterSpec = {
  description: { kind: 'pattern', pattern: '^(100|[1-9]?[0-9])$', example: '80' },
  parse(param, raw) {
    if (!/^(100|[1-9]?[0-9])$/.test(raw))
      throw errors.invalidParameter(param, `${param} must be a whole number from 0 to 100.`);
    return raw;
  },
  condition: (value) => sql.fragment`score >= ${Number(value)}`,
};

/** GET /duplicates: every open pair of the institution. */
export const duplicatePairList: ListSpec<DuplicatePairRow> = {
  ...collectionList(duplicateIdentity, duplicatePairTable, {
    present: presentDuplicatePair,
    filters: { min_score: minScore },
    sort: byScore,
  }),
  where: open,
};

type SidedRow = DuplicatePairRow & { viewer_id: number };

/** Each open pair once from each side: `viewer_id` is the donor it is read from. */
const bothSides = sql.fragment`(
  SELECT duplicate_pairs.*, donor_id AS viewer_id FROM duplicate_pairs WHERE ${open}
  UNION ALL
  SELECT duplicate_pairs.*, other_donor_id AS viewer_id FROM duplicate_pairs WHERE ${open}
) AS duplicate_pairs`;

const donorDuplicateList: ListSpec<SidedRow> = {
  endpoint: '/api/v1/donors/:id/duplicates',
  from: bothSides,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  sort: byScore,
  columns: sql.fragment`${columnsOf(duplicatePairTable)}, viewer_id`,
  row: z.intersection(duplicatePairTable.row, z.object({ viewer_id: z.number() })),
  keyOf: (row) => row.id,
  present: (row) => presentCandidate(row, row.viewer_id),
  filters: {},
};

/** GET /donors/{id}/duplicates: the donor's candidates, highest score first. */
export const donorDuplicates: RecordListDescriptor = {
  parentPath: '/donors',
  name: 'duplicates',
  parent: { table: 'donors', label: 'donor' },
  list: donorDuplicateList as ListSpec<unknown>,
  ofParent: (donorId) => sql.fragment`viewer_id = ${donorId}`,
  item: { response: duplicateCandidateResponse, component: 'DuplicateCandidate' },
  text: {
    operationId: 'listDonorDuplicates',
    summary: 'List a donor’s duplicate candidates',
    description:
      'The donors that may be the same person or organisation as this one, by the one matching rule (see `GET /duplicates`), highest `score` first, then the newest pair first. Each names the other donor (`donor_id`) and the pair (`pair_id`, which `POST /duplicates/{id}/dismiss` takes). Dismissed pairs are not listed. Kept current by the writes themselves: a donor write that makes or breaks a match shows in the next read. A donor of another institution is as absent as a missing one (404).',
    filterNotes: {},
  },
};

/**
 * The open candidates of a donor (columns of the enclosing statement name it and its
 * institution) as a JSON array of `duplicate_candidate`s, highest score first, at most
 * MAX_IMPORT_ROW_CANDIDATES.
 */
export const candidatesJson = (institutionId: FragmentSqlToken, donorId: FragmentSqlToken) =>
  sql.fragment`(
  SELECT coalesce(jsonb_agg(jsonb_build_object(
      'object', 'duplicate_candidate',
      'donor_id', CASE WHEN p.donor_id = ${donorId} THEN p.other_donor_id ELSE p.donor_id END,
      'pair_id', p.id, 'score', p.score::int, 'matched_on', to_jsonb(p.matched_on))
    ORDER BY p.score DESC, p.id DESC), '[]')
  FROM (
    SELECT * FROM duplicate_pairs AS p
    WHERE p.institution_id = ${institutionId} AND ${open}
      AND (p.donor_id = ${donorId} OR p.other_donor_id = ${donorId})
    ORDER BY p.score DESC, p.id DESC LIMIT ${MAX_IMPORT_ROW_CANDIDATES}) AS p)`;
