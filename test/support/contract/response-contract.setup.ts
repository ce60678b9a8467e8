import { Test } from 'supertest';
import { openApiContract, type ContractExchange } from './openapi-validator';

/**
 * Jest `setupFilesAfterEnv` of the e2e project: every answer a supertest request receives is checked against
 * openapi.json before the test's own expectations run, so a response the document does not describe fails the test
 * that caused it (with method, path, status, Ajv's errors and the request id). Child-process servers reached with
 * fetch are not covered.
 */

interface SuperagentResponse {
  status: number;
  headers: Record<string, unknown>;
  text?: unknown;
  body?: unknown;
}

interface PatchedTest {
  method: string;
  url: string;
  assert(
    resError: unknown,
    res: SuperagentResponse | undefined,
    fn?: (err: unknown, res: unknown) => void,
  ): void;
}

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

/** The error a non-conforming answer fails its test with; null when the answer conforms. */
export function contractViolation(exchange: ContractExchange): ContractViolation | null {
  const problems = openApiContract().check(exchange);
  if (problems.length === 0) {
    return null;
  }
  const requestId = String((exchange.headers['x-request-id'] as string | undefined) ?? '(no X-Request-ID)');
  const path = exchange.url.replace(/^[a-z]+:\/\/[^/]+/i, '');
  const text = typeof exchange.text === 'string' ? exchange.text : JSON.stringify(exchange.body ?? '');
  return new ContractViolation(
    `response does not match openapi.json: ${exchange.method.toUpperCase()} ${path} → ${exchange.status} ` +
      `(request ${requestId})\n  ${problems.join('\n  ')}\n  body: ${text.slice(0, 500)}`,
  );
}

const prototype = Test.prototype as unknown as PatchedTest;
const originalAssert = prototype.assert;

prototype.assert = function assertWithContract(this: PatchedTest, resError, res, fn) {
  if (res && typeof res.status === 'number') {
    const violation = contractViolation({
      method: this.method,
      url: this.url,
      status: res.status,
      headers: res.headers ?? {},
      text: typeof res.text === 'string' ? res.text : undefined,
      body: res.body,
    });
    if (violation) {
      // The test's own callback (or the promise supertest returns) receives the violation instead of the answer.
      fn?.call(this, violation, res);
      return;
    }
  }
  originalAssert.call(this, resError, res, fn);
};
