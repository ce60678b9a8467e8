import 'reflect-metadata';
import { type AddressInfo, isIPv6 } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from './app.factory';
import { StartupError } from './common/startup-error';
import { type AppConfig, ConfigError, loadConfig } from './config/app-config';
import { describeSmtp } from './config/smtp-settings';

async function main(): Promise<void> {
  const config = loadConfig();
  // Binds the port before anything else (database, data folder, token): a port in use creates nothing.
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
  const bound = (app.getHttpServer() as Server).address() as AddressInfo;
  const database = config.databaseUrl ? 'DATABASE_URL' : `embedded PGlite in ${config.dataDir}`;
  if (embedded) {
    process.stdout.write(`${embedded.durability}\n`);
  }
  process.stdout.write(
    `ISP API listening on ${urlOf(bound.address, bound.port)} (${reach(bound.address)}; database: ${database})\n` +
      `${mailLine(config.mail)}\n` +
      `API docs: ${urlOf(localAddressFor(bound.address), bound.port)}/docs\n` +
      `Customer portal: ${urlOf(localAddressFor(bound.address), bound.port)}/portal/\n`,
  );
}

/**
 * What mail does, in one line: the instance's default server and sender, or that notifications without a tenant's own
 * server are recorded as skipped. describeSmtp leaves the password out.
 */
function mailLine(mail: AppConfig['mail']): string {
  return mail
    ? `mail: ${describeSmtp(mail)}, from ${mail.from}`
    : 'mail: not configured (SMTP_URL unset): notifications will be recorded as skipped';
}

/** The address really bound, as a URL (IPv6 in brackets). */
function urlOf(address: string, port: number): string {
  return `http://${isIPv6(address) ? `[${address}]` : address}:${port}`;
}

function reach(address: string): string {
  if (address === '0.0.0.0') {
    return 'every IPv4 interface';
  }
  if (address === '::') {
    return 'every interface';
  }
  return address === '127.0.0.1' || address === '::1' ? 'this machine only' : 'this address only';
}

/** Where a browser on this machine reaches a server bound to every interface: the loopback address of its family. */
function localAddressFor(address: string): string {
  return address === '0.0.0.0' ? '127.0.0.1' : address === '::' ? '::1' : address;
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
