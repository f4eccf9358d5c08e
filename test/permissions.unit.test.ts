import fc from 'fast-check';
import {
  allows,
  levelOf,
  parsePermissions,
  permissionGroups,
  permissionLevels,
  permissionsFromStored,
  within,
  type Permissions,
} from '../common/auth/permissions.js';

const grant: fc.Arbitrary<Permissions> = fc.dictionary(
  fc.constantFrom(...permissionGroups, '*' as const),
  fc.constantFrom(...permissionLevels),
) as fc.Arbitrary<Permissions>;
const group = fc.constantFrom(...permissionGroups);

test('a group the grant does not name takes `*`, else none', () => {
  expect(levelOf({ '*': 'read', gifts: 'write' }, 'gifts')).toBe('write');
  expect(levelOf({ '*': 'read', gifts: 'none' }, 'gifts')).toBe('none');
  expect(levelOf({ '*': 'read' }, 'audit')).toBe('read');
  expect(levelOf({ donors: 'write' }, 'audit')).toBe('none');
});

test('write implies read; none allows nothing', () => {
  fc.assert(
    fc.property(grant, group, (permissions, name) => {
      const level = levelOf(permissions, name);
      expect(allows(permissions, { group: name, level: 'read' })).toBe(level !== 'none');
      expect(allows(permissions, { group: name, level: 'write' })).toBe(level === 'write');
    }),
  );
});

test('a grant within another allows nothing the other does not', () => {
  fc.assert(
    fc.property(grant, grant, group, (granted, holder, name) => {
      if (!within(granted, holder)) return;
      for (const level of ['read', 'write'] as const)
        if (allows(granted, { group: name, level }))
          expect(allows(holder, { group: name, level })).toBe(true);
    }),
  );
  fc.assert(
    fc.property(grant, (permissions) => expect(within(permissions, permissions)).toBe(true)),
  );
  expect(within({ '*': 'read' }, { '*': 'write' })).toBe(true);
  expect(within({ gifts: 'write' }, { '*': 'read' })).toBe(false);
});

test('a written grant parses to itself; unknown groups and levels are refused, named', () => {
  fc.assert(
    fc.property(grant, (permissions) =>
      expect(parsePermissions(permissions)).toEqual({ ok: true, permissions }),
    ),
  );
  expect(parsePermissions({ owners: 'read' })).toMatchObject({ ok: false, problem: /owners/ });
  expect(parsePermissions({ gifts: 'admin' })).toMatchObject({ ok: false, problem: /gifts/ });
  expect(parsePermissions(['gifts'])).toMatchObject({ ok: false });
  // What is stored and no longer understood widens nothing.
  expect(permissionsFromStored({ '*': 'read', owners: 'write', gifts: 'admin' })).toEqual({
    '*': 'read',
  });
});
