/**
 * Preloaded into the several-instances spec's server processes (see instances-process.ts): when the process was
 * started with TEST_WEBHOOK_TRACE=1, every webhook the worker sends prints `webhook-test sent <webhook-id> <url>` on
 * stdout, so the spec can tell which process sent which delivery. The send itself is unchanged. The worker calls
 * `sendWebhook` through the module's exports object, so replacing it there reaches the worker; the jest process never
 * sets the variable, so importing this file patches nothing.
 */
import type { sendWebhook } from '../../../src/webhooks/webhook-sender';
// Loads the module, so that its exports object is in the require cache below.
import '../../../src/webhooks/webhook-sender';

if (process.env.TEST_WEBHOOK_TRACE === '1') {
  // The module's own exports object (an import binding cannot be assigned).
  const exported = require.cache[require.resolve('../../../src/webhooks/webhook-sender')]?.exports as {
    sendWebhook: typeof sendWebhook;
  };
  const send = exported.sendWebhook;
  exported.sendWebhook = (target, headers, body, options) => {
    process.stdout.write(`webhook-test sent ${headers['webhook-id']} ${target}\n`);
    return send(target, headers, body, options);
  };
}
