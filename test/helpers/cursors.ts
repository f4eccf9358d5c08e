/**
 * A list page with each cursor as the position and filters it names, without its expiry (`x`,
 * common/pagination/cursor.ts): two reads of the same page a second apart sign cursors that
 * expire a second apart, and are the same page.
 */
export function pagePositions<
  T extends { next_cursor: string | null; previous_cursor: string | null },
>(page: T) {
  return {
    ...page,
    next_cursor: cursorPayload(page.next_cursor),
    previous_cursor: cursorPayload(page.previous_cursor),
  };
}

function cursorPayload(cursor: string | null): Record<string, unknown> | null {
  if (cursor === null) return null;
  const { x: _expiry, ...payload } = JSON.parse(
    Buffer.from(cursor.split('.')[0]!, 'base64url').toString('utf8'),
  ) as Record<string, unknown>;
  return payload;
}
