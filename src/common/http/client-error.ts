import type { NextFunction, Request, Response } from 'express';
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Clock } from '../clock';
import { errorEnvelope } from '../envelope/envelope';
import { newId } from '../ids';
import { requestContext } from '../request-context';

/**
 * What Node's HTTP parser refuses before any route runs (a malformed request line, header or framing; headers or a
 * URL past Node's limit; a request that took too long to arrive) is answered in the envelope like everything else,
 * with a code from the catalog and a fresh request id, instead of Node's bare status line. The connection is closed:
 * after a parse error its bytes cannot be trusted. The id's time is the app's `clock`.
 */
export function answerClientErrors(server: Server, clock: Clock): void {
  // Node answers an HTTP/1.1 request without Host with a bare 400 of its own; hostRequired answers it instead.
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const [status, code, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'The request line and headers exceed what the server reads (16 KiB).']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'request_timeout', 'The request did not arrive in time.']
          : [
              400,
              'malformed_request',
              'The HTTP request is malformed (its request line, a header or its framing).',
            ];
    const { requestId, body } = envelopeOutsideRequest(code, message, clock);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-ID: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
  // An Expect other than 100-continue: Node would answer a bare 417 itself; no route runs for it either way.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const { requestId, body } = envelopeOutsideRequest(
      'expectation_failed',
      'The server meets no expectation but 100-continue; send the request without this Expect header.',
      clock,
    );
    res.writeHead(417, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'X-Request-ID': requestId,
      Connection: 'close', // the body the client holds back is never read
    });
    res.end(body);
  });
}

/** No request has begun, so no context holds its id: the envelope is made inside one of its own, with a fresh id. */
function envelopeOutsideRequest(
  code: string,
  message: string,
  clock: Clock,
): { requestId: string; body: string } {
  const requestId = newId('req', clock.now());
  const body = JSON.stringify(requestContext.run({ requestId }, () => errorEnvelope(code, message, null)));
  return { requestId, body };
}

/** RFC 9112 §3.2: an HTTP/1.1 request without Host is answered 400, in the envelope (after requestIdMiddleware). */
export function hostRequired(req: Request, res: Response, next: NextFunction): void {
  if (req.httpVersion === '1.1' && req.headers.host === undefined) {
    res
      .status(400)
      .json(errorEnvelope('malformed_request', 'An HTTP/1.1 request must send a Host header.', null));
    return;
  }
  next();
}
