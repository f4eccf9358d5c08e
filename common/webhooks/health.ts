import { sql, type CommonQueryMethods } from 'slonik';

/** integration.md §2: an endpoint whose deliveries all failed for this long is disabled. */
export const FAILING_DAYS = 5;

/**
 * Disables the endpoints that have had deliveries for FAILING_DAYS and delivered none of them
 * in that time: every attempt since then failed. Returns how many.
 */
export async function disableFailingEndpoints(db: CommonQueryMethods): Promise<number> {
  const result = await db.query(sql.unsafe`
    UPDATE webhook_endpoints w SET status = 'disabled', updated_at = now()
    WHERE w.status = 'enabled'
      AND EXISTS (
        SELECT 1 FROM webhook_deliveries d
        WHERE d.institution_id = w.institution_id AND d.endpoint_id = w.id
          AND d.status <> 'delivered'
          AND d.created_at < now() - make_interval(days => ${FAILING_DAYS}))
      AND NOT EXISTS (
        SELECT 1 FROM webhook_deliveries d
        WHERE d.institution_id = w.institution_id AND d.endpoint_id = w.id
          AND d.status = 'delivered'
          AND d.updated_at >= now() - make_interval(days => ${FAILING_DAYS}))`);
  return result.rowCount;
}
