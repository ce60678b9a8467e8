import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Server } from 'node:http';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { answerClientErrors, hostRequired } from './common/http/client-error';
import { requestIdMiddleware, requestLogMiddleware } from './common/http/http-pipeline';
import type { Clock } from './common/clock';
import { createLogger, PinoNestLogger } from './common/logging/logger';
import { StartupError } from './common/startup-error';
import type { AppConfig } from './config/app-config';
import { probeDatabase } from './database/database-probe';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './database/embedded-postgres';
import { BootstrapService } from './gateway';
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
    /** Listen on this port before BootstrapService runs: a server that cannot bind issues no token. */
    port?: number;
    /** The time the business rules read (tests pass a TestClock); the system clock by default. */
    clock?: Clock;
  } = {},
): Promise<RunningApp> {
  if (config.databaseUrl) {
    await probeDatabase(config.databaseUrl);
  }
  const embedded: EmbeddedPostgres | null = config.databaseUrl
    ? null
    : await startEmbeddedPostgres(config.dataDir);
  const logger = createLogger(config.logLevel, options.logDestination);
  let app: NestExpressApplication | null = null;
  try {
    app = await NestFactory.create<NestExpressApplication>(
      AppModule.forRoot(
        config,
        embedded?.url ?? config.databaseUrl!,
        embedded ? 1 : config.databasePoolMax,
        options.clock,
      ),
      // abortOnError false: a failure reaches the caller (main.ts says it plainly) instead of process.exit inside Nest.
      { bodyParser: false, logger: new PinoNestLogger(logger), abortOnError: false },
    );
    app.set('trust proxy', config.trustProxy);
    app.disable('x-powered-by');
    app.set('etag', false); // hashing every body for an ETag no client uses costs CPU on large list pages
    // Bodies are read later, by JsonBodyGuard, once the caller is authenticated and within its rate limit.
    app.use(requestIdMiddleware, hostRequired, requestLogMiddleware(logger));
    setupSwagger(app);
    answerClientErrors(app.getHttpServer());
    await app.init();
    if (options.port !== undefined) {
      await listen(app.getHttpServer(), options.port);
    }
    await app.get(BootstrapService).run();
    const running = app;
    return {
      app: running,
      embedded,
      async close() {
        await running.close();
        await embedded?.stop();
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await embedded?.stop();
    throw error;
  }
}

/** Binds the HTTP port; one taken by another process is a plain StartupError. */
function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(new StartupError(`port ${port} is already in use; set PORT or stop the other process`));
      } else if (error.code === 'EACCES') {
        reject(
          new StartupError(`port ${port} needs privileges this process does not have; set PORT above 1023`),
        );
      } else {
        reject(error);
      }
    };
    server.once('error', failed);
    server.listen(port, () => {
      server.off('error', failed);
      resolve();
    });
  });
}
