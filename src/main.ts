import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from './app.factory';
import { StartupError } from './common/startup-error';
import { ConfigError, loadConfig } from './config/app-config';

async function main(): Promise<void> {
  const config = loadConfig();
  // Binds the port before the bootstrap token step, so a port in use fails before any token is issued.
  const { app, embedded, close } = await createApp(config, { port: config.port });
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) {
      return;
    }
    closing = true;
    process.stdout.write(`${signal} received, shutting down\n`);
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
  const url = `http://localhost:${port}`;
  const database = config.databaseUrl ? 'DATABASE_URL' : `embedded PGlite in ${config.dataDir}`;
  if (embedded) {
    process.stdout.write(`${embedded.durability}\n`);
  }
  process.stdout.write(`ISP API listening on ${url} (database: ${database})\nAPI docs: ${url}/docs\n`);
}

main().catch((error: unknown) => {
  // Expected failures (bad configuration, port taken, database unreachable, data folder in use): one plain line.
  if (error instanceof ConfigError || error instanceof StartupError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(
      `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
