/**
 * An answer holding a secret (a webhook's signing secret) implements this: the key stores, and a replay answers,
 * its redacted form, so no secret is kept twice and a retried request still gets its resource back.
 */
export interface RedactedOnReplay {
  replayForm(): object;
}

export function replayFormOf(answer: unknown): unknown {
  const redactable = answer as Partial<RedactedOnReplay> | null | undefined;
  return typeof redactable?.replayForm === 'function' ? redactable.replayForm() : answer;
}
