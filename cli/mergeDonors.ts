/**
 * `admin donors merge`: merges one donor into another through the API, as any client would
 * (POST /api/v1/donors/{survivor}/merge), so the merge is the same command, queue, worker and
 * event as a merge made by an application. A dry run comes first and its counts go to stderr;
 * `--dry-run` stops there. The real call carries an Idempotency-Key made of the institution
 * and the two ids, as every write should: a resent request replays the merge's answer.
 */
export interface MergeOptions {
  apiUrl: string;
  apiKey: string;
  institution: number;
  survivor: number;
  source: number;
  dryRun: boolean;
}

interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string } };
}

export class MergeError extends Error {}

async function call(options: MergeOptions, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${options.apiUrl.replace(/\/$/, '')}/api/v1${path}`, {
    ...init,
    headers: {
      'X-Service-API-Key': options.apiKey,
      'Content-Type': 'application/json',
      ...init.headers,
    },
    // As `admin import`: a redirect is someone else's answer, and the key goes nowhere else.
    redirect: 'manual',
  });
  if (response.status >= 300 && response.status < 400)
    throw new MergeError(`${response.status}: the API answered with a redirect, not followed`);
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const refusal = (answer: Answer) =>
  new MergeError(
    `${answer.status} ${answer.body.error?.code ?? ''}: ${answer.body.error?.message ?? 'refused'}`,
  );

export async function mergeDonors(
  options: MergeOptions,
): Promise<{ dry_run: Record<string, unknown>; merged: Record<string, unknown> | null }> {
  const institution = await call(options, '/institution');
  if (institution.status !== 200) throw refusal(institution);
  if (institution.body.id !== options.institution)
    throw new MergeError(
      `The API key is of institution ${String(institution.body.id)}, not ${options.institution}`,
    );
  const path = `/donors/${options.survivor}/merge`;
  const body = JSON.stringify({ source_id: options.source });
  const dry = await call(options, `${path}?dry_run=true`, { method: 'POST', body });
  if (dry.status !== 200) throw refusal(dry);
  process.stderr.write(
    `Dry run: merging donor ${options.source} into ${options.survivor} moves ${JSON.stringify(dry.body.moved)}; drops ${JSON.stringify(dry.body.dropped)}\n`,
  );
  if (options.dryRun) return { dry_run: dry.body, merged: null };
  const real = await call(options, path, {
    method: 'POST',
    body,
    headers: {
      'Idempotency-Key': `admin-merge-${options.institution}-${options.survivor}-${options.source}`,
    },
  });
  if (real.status !== 200) throw refusal(real);
  return { dry_run: dry.body, merged: real.body };
}
