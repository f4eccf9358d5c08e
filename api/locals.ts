import type { Principal } from '../common/auth/apiKeys.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      requestId: string;
      /** Set by requireApiKey on every /api/v1 route. */
      principal: Principal;
      /** The route pattern matched, for metrics labels. */
      route?: string;
      /** The permission the route needs (`gifts:write`), once the key has been checked for it. */
      permission?: string;
    }
  }
}

export {};
