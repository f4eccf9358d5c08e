/**
 * The campaign of each appeal this process last read, by institution and appeal: hints that let
 * a gift coded only to an appeal commit in one statement (giftInOneStatement), whose guard
 * confirms the appeal still has that campaign (codedLinesHold). A wrong or stale hint costs only
 * the full path, which reads the appeal (codingOf) and hints it again.
 */
const MAX_HINTS = 10_000;
const hints = new Map<string, number | null>();

const keyOf = (institutionId: number, appealId: number) => `${institutionId}:${appealId}`;

export function hintAppealCampaign(
  institutionId: number,
  appealId: number,
  campaignId: number | null,
): void {
  const key = keyOf(institutionId, appealId);
  hints.delete(key);
  // Oldest first out: a Map iterates in insertion order.
  if (hints.size >= MAX_HINTS) hints.delete(hints.keys().next().value!);
  hints.set(key, campaignId);
}

/** The hinted campaign (null: the appeal has none); undefined when nothing is hinted. */
export const hintedAppealCampaign = (
  institutionId: number,
  appealId: number,
): number | null | undefined => hints.get(keyOf(institutionId, appealId));
