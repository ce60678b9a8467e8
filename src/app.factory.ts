import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { RequestListener } from 'node:http';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { answerClientErrors, hostRequired } from './common/http/client-error';
import { corsMiddleware } from './common/http/cors';
import { bindPort, BoundExpressAdapter } from './common/http/early-listen';
import { requestIdMiddleware, requestLogMiddleware } from './common/http/http-pipeline';
import { Clock } from './common/clock';
import { createLogger, PinoNestLogger } from './common/logging/logger';
import type { AppConfig } from './config/app-config';
import { probeDatabase } from './database/database-probe';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './database/embedded-postgres';
import { BootstrapService } from './gateway';
import { mountPortal } from './portal';
import { setupSwagger } from './swagger';

export interface RunningApp {
  app: INestApplication;
  /** The embedded database this app started; null on DATABASE_URL. */
  embedded: EmbeddedPostgres | null;
  /** Closes the app, then the embedded database if this app started one. */
  close(): Promise<void>;
}

/** Builds the whole application, the same way for the server, the tests and the OpenAPI generator. */
export async function createApp(
  config: AppConfig,
  options: {
    logDestination?: DestinationStream;
    /** Listen on this port (on config.host) before anything else: a server that cannot bind creates nothing. */
    port?: number;
    /** Every read of the time (tests pass test/support/test-clock.ts's TestClock); the system clock by default. */
    clock?: Clock;
  } = {},
): Promise<RunningApp> {
  const clock = options.clock ?? new Clock();
  // Bound first: a port in use (or a HOST not ours) stops the start before the database or its data folder exists.
  const bound = options.port !== undefined ? await bindPort(options.port, config.host, clock) : null;
  let embedded: EmbeddedPostgres | null = null;
  let app: NestExpressApplication | null = null;
  try {
    if (config.databaseUrl) {
      await probeDatabase(config.databaseUrl);
    }
    embedded = config.databaseUrl ? null : await startEmbeddedPostgres(config.dataDir);
    const logger = createLogger(config.logLevel, options.logDestination);
    const nestOptions = { bodyParser: false, logger: new PinoNestLogger(logger), abortOnError: false };
    const module = AppModule.forRoot(
      config,
      embedded?.url ?? config.databaseUrl!,
      embedded ? 1 : config.databasePoolMax,
      clock,
    );
    // abortOnError false: a failure reaches the caller (main.ts says it plainly) instead of process.exit inside Nest.
    app = bound
      ? await NestFactory.create<NestExpressApplication>(
          module,
          new BoundExpressAdapter(bound.server),
          nestOptions,
        )
      : await NestFactory.create<NestExpressApplication>(module, nestOptions);
    app.set('trust proxy', config.trustProxy);
    app.disable('x-powered-by');
    app.set('etag', false); // hashing every body for an ETag no client uses costs CPU on large list pages
    // Bodies are read later, by JsonBodyGuard, once the caller is authenticated and within its rate limit.
    app.use(
      requestIdMiddleware(clock),
      hostRequired,
      requestLogMiddleware(logger),
      corsMiddleware(config.corsOrigins),
    );
    // The customer portal's pages at /portal/, ahead of the routes: the API under /api is untouched by it.
    mountPortal(app);
    setupSwagger(app);
    answerClientErrors(app.getHttpServer(), clock);
    await app.init();
    bound?.serve(app.getHttpAdapter().getInstance() as RequestListener);
    await app.get(BootstrapService).run();
    const running = app;
    const database = embedded;
    return {
      app: running,
      embedded,
      async close() {
        await running.close();
        await database?.stop();
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await bound?.close();
    await embedded?.stop();
    throw error;
  }
}
