import { randomBytes } from 'node:crypto';
import type { Command } from '../../common/commands/command.js';
import type { WriteJob } from '../../common/commands/runWrite.js';
import { fingerprintOf } from '../../common/idempotency/fingerprint.js';
import type { Tenant } from './harness.js';

/**
 * A real write as the API hands it to the worker (the job contract of common/commands/runWrite.ts),
 * for tests that drive the write path below HTTP: a body for `command` on the tenant's behalf,
 * with a fresh request id unless one is given.
 */
export function writeJobFor(
  tenant: Tenant,
  command: Pick<Command, 'name'>,
  body: Record<string, unknown>,
  idempotencyKey: string | null = null,
  requestId = `req_${randomBytes(12).toString('hex')}`,
): WriteJob {
  const request = { params: {}, body: body as WriteJob['request']['body'] };
  return {
    command: command.name,
    institution: { id: tenant.institutionId, name: 'Test University', currency: 'USD' },
    apiKeyId: tenant.apiKeyId,
    requestId,
    request,
    fingerprint: fingerprintOf(command.name, request),
    idempotencyKey,
  };
}
