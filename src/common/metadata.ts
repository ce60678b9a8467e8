import { ApiError } from './errors/api-error';
import { metadataProblem } from './validation/is-metadata';

/** Free-form key/value data a client attaches to a record (subscribers, transactions); its limits are in is-metadata. */
export type Metadata = Record<string, string | number | boolean | null>;

/**
 * A PATCH of metadata, Stripe-style: sent keys are set, keys sent as null are removed, `metadata: null` clears all.
 * The merged result must still keep the limits (422 naming the key otherwise).
 */
export function mergeMetadata(current: Metadata, patch: Metadata | null): Metadata {
  if (patch === null) {
    return {};
  }
  const merged: Metadata = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete merged[key];
    } else {
      merged[key] = value;
    }
  }
  const problem = metadataProblem(merged);
  if (problem) {
    throw new ApiError(
      'validation_failed',
      problem.message,
      problem.path ? `metadata.${problem.path}` : 'metadata',
    );
  }
  return merged;
}
