'use strict';
/**
 * The house rules of the contract that Redocly's configurable rules cannot say: every 2xx body is the envelope.
 * Loaded by redocly.yaml; test/lint/openapi-rules.spec.ts runs it on fixtures.
 */

/** The schema a 2xx answer documents: an object requiring success (always true), data and meta, the meta a $ref. */
function SuccessEnvelope() {
  return {
    Response: {
      enter(response, { key, report, location, resolve }) {
        // A webhook's answer is the receiver's (any 2xx), not one of ours: only paths answer with the envelope.
        if (!/^2/.test(String(key)) || location.pointer.startsWith('#/webhooks/')) {
          return;
        }
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          // A document (application/pdf) is the answer itself; the envelope is for JSON answers.
          if (!/json/.test(mediaType)) {
            continue;
          }
          const at = location.child(['content', mediaType, 'schema']);
          const schema = media.schema && resolve(media.schema).node;
          const problem = envelopeProblem(schema, (node) => resolve(node).node);
          if (problem) {
            report({ message: `A 2xx body must be the envelope {success: true, data, meta}: ${problem}.`, location: at });
          }
        }
        if (!response.content && String(key) !== '204') {
          report({ message: 'A 2xx answer must have a body: the envelope {success: true, data, meta}.', location });
        }
      },
    },
  };
}

function envelopeProblem(schema, deref) {
  if (!schema) {
    return 'no schema';
  }
  if (schema.type !== 'object') {
    return 'not an object';
  }
  const required = schema.required ?? [];
  const missing = ['success', 'data', 'meta'].filter((name) => !required.includes(name) || !schema.properties?.[name]);
  if (missing.length > 0) {
    return `${missing.join(', ')} not required properties`;
  }
  const success = deref(schema.properties.success);
  const constantTrue =
    success.const === true || (Array.isArray(success.enum) && success.enum.length === 1 && success.enum[0] === true);
  if (success.type !== 'boolean' || !constantTrue) {
    return '`success` is not the constant true';
  }
  const meta = deref(schema.properties.meta);
  if (!meta || !(meta.required ?? []).includes('request_id') || !(meta.required ?? []).includes('api_version')) {
    return '`meta` does not require request_id and api_version';
  }
  return null;
}

module.exports = function ispPlugin() {
  return {
    id: 'isp',
    rules: { oas3: { 'success-envelope': SuccessEnvelope } },
  };
};
