import type { DatabasePool } from 'slonik';
import type { Permissions } from '../../common/auth/permissions.js';
import { insertApiKey } from '../../common/institutions.js';

/** A key of the institution with exactly these permissions, as the operator CLI makes one. */
export const keyWith = (db: DatabasePool, institutionId: number, permissions: Permissions) =>
  insertApiKey(db, institutionId, { name: 'Test key', permissions });
