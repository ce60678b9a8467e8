import { isEventPattern } from '../../events';
import { ValidateValue, ValueProblem } from '../../common/validation/value-problem';

/** The first entry of a list of event patterns that is not a string or not a known pattern, by its index. */
function eventPatternProblem(value: unknown, property: string): ValueProblem | null {
  if (!Array.isArray(value)) {
    return null;
  } // IsArray answers for the list itself.
  for (const [index, item] of (value as unknown[]).entries()) {
    const path = String(index);
    if (typeof item !== 'string') {
      return { path, message: `${property}.${path} must be a string` };
    }
    if (!isEventPattern(item)) {
      return {
        path,
        message:
          `${property}.${path} ${JSON.stringify(item)} is not a known event type, a known prefix ending in .*, ` +
          'or *; GET /api/v1/event-types lists the types',
      };
    }
  }
  return null;
}

/**
 * Webhook event patterns: a known event type, `prefix.*` of a known prefix, or `*`, so a typo (`subscriber.craeted`)
 * is refused at registration instead of never firing. A failure names the entry (`events.1`).
 */
export function IsEventPatterns() {
  return ValidateValue('isEventPatterns', eventPatternProblem);
}
