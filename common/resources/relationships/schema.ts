import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { calendarDate, recordId, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import { organizationRoles } from '../donors/schema.js';
import type { Table } from '../table.js';

export const relationshipIdentity: ResourceIdentity = {
  name: 'relationships',
  object: 'relationship',
  label: 'relationship',
  path: '/relationships',
};

/** The types a relationship is written with: "donor_id is TYPE of related_donor_id". */
export const relationshipTypes = [
  'spouse_of',
  'partner_of',
  'parent_of',
  'sibling_of',
  'employee_of',
  'board_member_of',
  'advisor_of',
  'other',
] as const;
export type RelationshipType = (typeof relationshipTypes)[number];

/** Which donors a type may join, on the donor's side and on the related donor's. */
type RoleRule = 'individuals' | 'individual_and_organization' | 'any';

/** The type table of constituents.md §2: each type's reciprocal and the roles it joins. */
export const relationshipTypeTable: Record<
  RelationshipType,
  { reciprocal: string; roles: RoleRule }
> = {
  spouse_of: { reciprocal: 'spouse_of', roles: 'individuals' },
  partner_of: { reciprocal: 'partner_of', roles: 'individuals' },
  parent_of: { reciprocal: 'child_of', roles: 'individuals' },
  sibling_of: { reciprocal: 'sibling_of', roles: 'individuals' },
  employee_of: { reciprocal: 'employer_of', roles: 'individual_and_organization' },
  board_member_of: { reciprocal: 'has_board_member', roles: 'individual_and_organization' },
  advisor_of: { reciprocal: 'advised_by', roles: 'any' },
  other: { reciprocal: 'other', roles: 'any' },
};

/** Every name a relationship is read with: the types and, from the related side, their reciprocals. */
export const relationshipViewTypes = [
  ...new Set(relationshipTypes.flatMap((type) => [type, relationshipTypeTable[type].reciprocal])),
] as [string, ...string[]];

/** A reciprocal sent as a type: the type it is the reciprocal of, for the message. */
export const reciprocalOf = (name: string): RelationshipType | undefined =>
  relationshipTypes.find(
    (type) => type !== name && relationshipTypeTable[type].reciprocal === name,
  );

/** The types an Individual may have only one current of (constituents.md §2). */
export const partnerTypes: readonly RelationshipType[] = ['spouse_of', 'partner_of'];

/** Whether a donor of `role` (and one of `relatedRole`) may be joined by `type`. */
export function rolesFit(type: RelationshipType, role: string, relatedRole: string): boolean {
  switch (relationshipTypeTable[type].roles) {
    case 'individuals':
      return role === 'Individual' && relatedRole === 'Individual';
    case 'individual_and_organization':
      return role === 'Individual' && organizationRoles.includes(relatedRole);
    case 'any':
      return true;
  }
}

/** One of the types; a reciprocal (`child_of`) is refused with the way to write it. */
const relationshipType = z.enum(relationshipTypes, {
  error: (issue) => {
    const type = typeof issue.input === 'string' ? reciprocalOf(issue.input) : undefined;
    return type
      ? `${String(issue.input)} is how the related donor reads a relationship: write ${type} with donor_id and related_donor_id swapped`
      : `must be one of: ${relationshipTypes.join(', ')}`;
  },
});

export const relationshipShape: Shape = {
  donor_id: { schema: recordId, required: true },
  related_donor_id: { schema: recordId, required: true },
  type: { schema: relationshipType, required: true },
  starts_on: { schema: calendarDate, nullable: true },
  ends_on: { schema: calendarDate, nullable: true },
  note: { schema: text(500), nullable: true },
};

export const relationshipDefaults = { starts_on: null, ends_on: null, note: null } as const;

const relationshipRow = z.object({
  id: z.number(),
  donor_id: z.number(),
  related_donor_id: z.number(),
  type: z.enum(relationshipTypes),
  starts_on: z.string().nullable(),
  ends_on: z.string().nullable(),
  note: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type RelationshipRow = z.infer<typeof relationshipRow>;
export type RelationshipFields = Omit<RelationshipRow, 'id' | 'created_at' | 'updated_at'>;

const asDate = (value: string | null) => (value === null ? null : sql.fragment`${value}::date`);

export const relationshipTable: Table<RelationshipRow, RelationshipFields> = {
  name: 'relationships',
  row: relationshipRow,
  // node-postgres would turn a date into a Date at local midnight: dates are read as text.
  readAs: { starts_on: sql.fragment`starts_on::text`, ends_on: sql.fragment`ends_on::text` },
  writeAs: { starts_on: asDate, ends_on: asDate },
};
