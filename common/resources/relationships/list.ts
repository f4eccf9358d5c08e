import { sql } from 'slonik';
import { z } from 'zod';
import type { ListSpec } from '../../pagination/listSpec.js';
import type { RecordListDescriptor } from '../descriptor.js';
import { columnsOf } from '../table.js';
import { presentRelationshipFrom } from './present.js';
import { relationshipTable, type RelationshipRow } from './schema.js';

type SidedRow = RelationshipRow & { viewer_id: number };

/**
 * Each relationship once from each side: `viewer_id` is the donor it is read from. The condition
 * on `viewer_id` reaches each branch, so a donor's page reads the index of each side.
 */
const bothSides = sql.fragment`(
  SELECT relationships.*, donor_id AS viewer_id FROM relationships
  UNION ALL
  SELECT relationships.*, related_donor_id AS viewer_id FROM relationships) AS relationships`;

const donorRelationshipList: ListSpec<SidedRow> = {
  endpoint: '/api/v1/donors/:id/relationships',
  from: bothSides,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns: sql.fragment`${columnsOf(relationshipTable)}, viewer_id`,
  row: z.intersection(relationshipTable.row, z.object({ viewer_id: z.number() })),
  keyOf: (row) => row.id,
  present: (row) => presentRelationshipFrom(row, row.viewer_id),
  filters: {},
};

/** GET /donors/{id}/relationships: every relationship of the donor, from the donor's side. */
export const donorRelationships: RecordListDescriptor = {
  parentPath: '/donors',
  name: 'relationships',
  parent: { table: 'donors', label: 'donor' },
  list: donorRelationshipList as ListSpec<unknown>,
  ofParent: (donorId) => sql.fragment`viewer_id = ${donorId}`,
  text: {
    operationId: 'listDonorRelationships',
    summary: 'List a donor’s relationships',
    description:
      'Every relationship of one donor, whichever side it was written from, newest first, each as seen from that donor: `donor_id` is this donor, and where the relationship was written from the other donor, `related_donor_id` is that donor and `type` the reciprocal (a relationship written "A `parent_of` B" lists under B as "B `child_of` A"). Ended relationships are listed too (`is_current` false). A donor of another institution is as absent as a missing one (404).',
    filterNotes: {},
  },
};
