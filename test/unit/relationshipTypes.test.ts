import {
  isCurrent,
  presentRelationshipFrom,
} from '../../common/resources/relationships/present.js';
import {
  reciprocalOf,
  relationshipTypes,
  rolesFit,
  type RelationshipRow,
} from '../../common/resources/relationships/schema.js';

/** The type table of constituents.md §2 and the reading of a relationship from either side. */

const roles = ['Individual', 'Household', 'Organization', 'Foundation', 'Corporation'];
const organizations = ['Organization', 'Foundation', 'Corporation'];

test.each(relationshipTypes)('%s joins exactly the roles of the type table', (type) => {
  for (const role of roles)
    for (const related of roles) {
      const expected =
        type === 'advisor_of' || type === 'other'
          ? true
          : type === 'employee_of' || type === 'board_member_of'
            ? role === 'Individual' && organizations.includes(related)
            : role === 'Individual' && related === 'Individual';
      expect([role, related, rolesFit(type, role, related)]).toEqual([role, related, expected]);
    }
});

test('a reciprocal names the type written the other way round; a type is no reciprocal', () => {
  expect(reciprocalOf('child_of')).toBe('parent_of');
  expect(reciprocalOf('employer_of')).toBe('employee_of');
  expect(reciprocalOf('has_board_member')).toBe('board_member_of');
  expect(reciprocalOf('advised_by')).toBe('advisor_of');
  for (const type of relationshipTypes) expect(reciprocalOf(type)).toBeUndefined();
});

test('current: not ended before the day', () => {
  expect(isCurrent(null, '2026-06-15')).toBe(true);
  expect(isCurrent('2026-06-15', '2026-06-15')).toBe(true);
  expect(isCurrent('2026-06-14', '2026-06-15')).toBe(false);
});

test('read from the related donor, the donors change places and the type is its reciprocal', () => {
  const row: RelationshipRow = {
    id: 7,
    donor_id: 1,
    related_donor_id: 2,
    type: 'parent_of',
    starts_on: null,
    ends_on: null,
    note: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  };
  expect(presentRelationshipFrom(row, 1)).toMatchObject({
    donor_id: 1,
    related_donor_id: 2,
    type: 'parent_of',
  });
  expect(presentRelationshipFrom(row, 2)).toMatchObject({
    donor_id: 2,
    related_donor_id: 1,
    type: 'child_of',
  });
  expect(presentRelationshipFrom({ ...row, type: 'sibling_of' }, 2).type).toBe('sibling_of');
});
