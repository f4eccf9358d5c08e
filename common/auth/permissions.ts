/**
 * What an API key may do (trust.md §1): a level per permission group. Deny by default: every
 * route names the one permission it needs (api/routes.ts), and a route that names none stops
 * the service from starting (checkRoutePermissions).
 */

/** The permission groups, exactly as trust.md §1 names them; a resource belongs to one. */
export const permissionGroups = [
  'donors',
  'gifts',
  'funds',
  'campaigns',
  'scholarships',
  'users',
  'tags',
  'imports',
  'webhooks',
  'events',
  'reports',
  'institution',
  'api_keys',
  'audit',
] as const;
export type PermissionGroup = (typeof permissionGroups)[number];

export const permissionLevels = ['none', 'read', 'write'] as const;
export type PermissionLevel = (typeof permissionLevels)[number];

/** What a route needs: read, or write (which implies read). */
export type RequiredLevel = Exclude<PermissionLevel, 'none'>;

export interface RequiredPermission {
  group: PermissionGroup;
  level: RequiredLevel;
}

/** A key's grant: groups to levels, `*` for every group not named. */
export type Permissions = Partial<Record<PermissionGroup | '*', PermissionLevel>>;

/** What keys made before permissions existed hold, and what the operator's first key holds. */
export const fullAccess: Permissions = Object.freeze({ '*': 'write' });

const rank: Record<PermissionLevel, number> = { none: 0, read: 1, write: 2 };

const groupSet = new Set<string>(permissionGroups);
const levelSet = new Set<string>(permissionLevels);

export const isPermissionGroup = (value: string): value is PermissionGroup => groupSet.has(value);
export const isPermissionLevel = (value: unknown): value is PermissionLevel =>
  typeof value === 'string' && levelSet.has(value);

/** The level a grant gives one group. */
export const levelOf = (permissions: Permissions, group: PermissionGroup): PermissionLevel =>
  permissions[group] ?? permissions['*'] ?? 'none';

export const allows = (permissions: Permissions, required: RequiredPermission): boolean =>
  rank[levelOf(permissions, required.group)] >= rank[required.level];

/** `gifts:write`, as the OpenAPI document (`x-required-permission`) and errors write it. */
export const permissionName = (required: RequiredPermission): string =>
  `${required.group}:${required.level}`;

/** A GET reads; any other method writes. */
export const requiredFor = (method: string, group: PermissionGroup): RequiredPermission => ({
  group,
  level: method.toLowerCase() === 'get' ? 'read' : 'write',
});

/** Whether `granted` gives nothing beyond `holder` in any group (a key makes no key wider than itself). */
export const within = (granted: Permissions, holder: Permissions): boolean =>
  permissionGroups.every((group) => rank[levelOf(granted, group)] <= rank[levelOf(holder, group)]);

/**
 * A grant as stored (jsonb): unknown groups or levels (from a newer build, or edited by hand)
 * are dropped rather than widening anything; what is left reads as the grant.
 */
export function permissionsFromStored(stored: unknown): Permissions {
  const permissions: Permissions = {};
  if (!stored || typeof stored !== 'object' || Array.isArray(stored)) return permissions;
  for (const [group, level] of Object.entries(stored)) {
    if ((group === '*' || isPermissionGroup(group)) && isPermissionLevel(level))
      permissions[group] = level;
  }
  return permissions;
}

interface RouteWithPermission {
  method: string;
  path: string;
  permission?: RequiredPermission | undefined;
}

/**
 * Deny by default, enforced where the route table is built: a route that names no permission, or
 * one that does not exist, stops the service (and the document's build) with the route named. A
 * GET that needs write, or a write that needs only read, is a mistake in its declaration too.
 */
export function checkRoutePermissions(routes: readonly RouteWithPermission[]): void {
  for (const { method, path, permission } of routes) {
    const where = `${method.toUpperCase()} /api/v1${path}`;
    if (!permission || !isPermissionGroup(permission.group))
      throw new Error(
        `${where} declares no permission: give its resource a \`permission\` group (docs/adding-a-resource.md)`,
      );
    if (permission.level !== requiredFor(method, permission.group).level)
      throw new Error(
        `${where} needs ${permissionName(permission)}, but a ${method.toUpperCase()} needs ${requiredFor(method, permission.group).level}`,
      );
  }
}

/**
 * A grant as a client or the operator writes it: an object of known groups (or `*`) to
 * none/read/write. The problem, in words, when it is not one.
 */
export function parsePermissions(
  value: unknown,
): { ok: true; permissions: Permissions } | { ok: false; problem: string } {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, problem: 'must be an object of permission groups to levels' };
  const permissions: Permissions = {};
  for (const [group, level] of Object.entries(value)) {
    if (group !== '*' && !isPermissionGroup(group))
      return {
        ok: false,
        problem: `${group} is not a permission group (one of ${permissionGroups.join(', ')}, or *)`,
      };
    if (!isPermissionLevel(level))
      return { ok: false, problem: `the level of ${group} must be none, read or write` };
    permissions[group] = level;
  }
  return { ok: true, permissions };
}
