import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { requestIdMiddleware, requestLogMiddleware } from './common/http/http-pipeline';
import { createLogger, PinoNestLogger } from './common/logging/logger';
import type { AppConfig } from './config/app-config';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './database/embedded-postgres';
import { setupSwagger } from './swagger';

export interface RunningApp {
  app: INestApplication;
  /** Closes the app, then the embedded database if this app started one. */
  close(): Promise<void>;
}

/** Builds the whole application, the same way for the server, the tests and the OpenAPI generator. */
export async function createApp(
  config: AppConfig,
  options: { logDestination?: DestinationStream } = {},
): Promise<RunningApp> {
  const embedded: EmbeddedPostgres | null = config.databaseUrl
    ? null
    : await startEmbeddedPostgres(config.dataDir);
  const logger = createLogger(config.logLevel, options.logDestination);
  try {
    const app = await NestFactory.create<NestExpressApplication>(
      AppModule.forRoot(config, embedded?.url ?? config.databaseUrl!, embedded ? 1 : config.databasePoolMax),
      { bodyParser: false, logger: new PinoNestLogger(logger) },
    );
    app.set('trust proxy', config.trustProxy);
    app.disable('x-powered-by');
    app.set('etag', false); // hashing every body for an ETag no client uses costs CPU on large list pages
    // Bodies are read later, by JsonBodyGuard, once the caller is authenticated and within its rate limit.
    app.use(requestIdMiddleware, requestLogMiddleware(logger));
    setupSwagger(app);
    await app.init();
    return {
      app,
      async close() {
        await app.close();
        await embedded?.stop();
      },
    };
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
}
