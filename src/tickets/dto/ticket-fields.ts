import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { ValidationOptions } from 'class-validator';
import { ValidateValue, type ValueProblem } from '../../common/validation/value-problem';

export const TAG_LIMITS = { maxTags: 20, maxLength: 50 };

/** Why a tags list is refused, at which item, or null: an array of at most 20 strings, each 1–50 once trimmed. */
export function tagsProblem(value: unknown, property = 'tags'): ValueProblem | null {
  if (!Array.isArray(value)) {
    return { path: '', message: `${property} must be an array of strings` };
  }
  if (value.length > TAG_LIMITS.maxTags) {
    return { path: '', message: `${property} may hold at most ${TAG_LIMITS.maxTags} tags` };
  }
  for (const [index, tag] of value.entries()) {
    if (typeof tag !== 'string') {
      return { path: String(index), message: `${property}.${index} must be a string` };
    }
    const length = tag.trim().length;
    if (length === 0 || length > TAG_LIMITS.maxLength) {
      return {
        path: String(index),
        message: `${property}.${index} must be 1 to ${TAG_LIMITS.maxLength} characters`,
      };
    }
  }
  return null;
}

/** Tags as stored: trimmed, lower-cased, each once, in the order first sent. */
export function normalizeTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim().toLowerCase()))];
}

export function IsTags(options?: ValidationOptions) {
  return applyDecorators(
    ApiPropertyOptional({
      type: [String],
      maxItems: TAG_LIMITS.maxTags,
      example: ['fiber', 'outage'],
      description:
        `At most ${TAG_LIMITS.maxTags} tags of 1 to ${TAG_LIMITS.maxLength} characters; stored trimmed, ` +
        'lower-cased and each once.',
    }),
    (target: object, key: string | symbol) =>
      ValidateValue('isTags', tagsProblem, options)(target, String(key)),
  );
}
