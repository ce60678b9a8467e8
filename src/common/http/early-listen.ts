import { ExpressAdapter } from '@nestjs/platform-express';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Clock } from '../clock';
import { errorEnvelope, successEnvelope } from '../envelope/envelope';
import { newId } from '../ids';
import { requestContext } from '../request-context';
import { StartupError } from '../startup-error';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * What the port answers while the application behind it is still being built: the process is alive (/health/live),
 * and everything else is 503 in the envelope, retry soon (what /health/ready says until the start has finished).
 */
function starting(req: IncomingMessage, res: ServerResponse, clock: Clock): void {
  const requestId = newId('req', clock.now());
  const live = req.method === 'GET' && req.url?.split('?')[0] === '/health/live';
  const body = JSON.stringify(
    requestContext.run({ requestId }, () =>
      live
        ? successEnvelope({ status: 'ok' })
        : errorEnvelope('service_unavailable', 'The server is still starting; retry shortly.', null),
    ),
  );
  res.writeHead(live ? 200 : 503, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Request-ID': requestId,
    ...(live ? {} : { 'Retry-After': '1' }),
  });
  res.end(body);
}

/** A bound HTTP server whose requests go to `serve` once the application is ready, and are answered 503 until then. */
export interface BoundServer {
  server: Server;
  serve(handler: Handler): void;
  close(): Promise<void>;
}

/**
 * Binds the HTTP port before anything else is done (database, data folder, token): a port that is taken or not
 * ours stops the start with one plain line, having created nothing. `clock` dates the ids of the 503s meanwhile.
 */
export function bindPort(port: number, host: string, clock: Clock): Promise<BoundServer> {
  let handler: Handler = (req, res) => starting(req, res, clock);
  const server = createServer((req, res) => handler(req, res));
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(describeListenError(error, port, host));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve({
        server,
        serve(next) {
          handler = next;
        },
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

function describeListenError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  switch (error.code ?? '') {
    case 'EADDRINUSE':
      return new StartupError(`port ${port} is already in use; set PORT or stop the other process`);
    case 'EACCES':
      return new StartupError(
        `port ${port} needs privileges this process does not have; set PORT above 1023`,
      );
    case 'EADDRNOTAVAIL':
    case 'EAFNOSUPPORT':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(
        `HOST ${host} is not an address of this machine (${error.code}); set HOST to one of its addresses, or 0.0.0.0 for all of them`,
      );
    default:
      return error;
  }
}

/** Nest's Express adapter on a server bound already (bindPort), instead of one it creates unbound. */
export class BoundExpressAdapter extends ExpressAdapter {
  constructor(private readonly bound: Server) {
    super();
  }

  override initHttpServer(): void {
    this.httpServer = this.bound;
  }
}
