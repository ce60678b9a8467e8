import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pino from 'pino';
import { Clock } from '../common/clock';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids';
import { PinoNestLogger } from '../common/logging/logger';
import { type AppConfig, ConfigError, loadConfig } from '../config/app-config';
import { probeDatabase } from '../database/database-probe';
import {
  DataDirInUseError,
  type EmbeddedPostgres,
  startEmbeddedPostgres,
} from '../database/embedded-postgres';
import { TenantsService, TokensService } from '../gateway';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, parseCommand, USAGE } from './cli-args';
import { CliCommands } from './cli-commands';
import { CliModule } from './cli.module';

const print = (line: string): void => void process.stdout.write(`${line}\n`);
const fail = (message: string, exitCode: number): number => {
  process.stderr.write(`Error: ${message}\n`);
  return exitCode;
};

/** Logs go to stderr, so stdout carries only the command's output (a token secret on its last line). */
function stderrLogger(config: AppConfig): PinoNestLogger {
  const logger = pino(
    { level: config.logLevel, base: { service: 'isp-api-cli' }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination(2),
  );
  return new PinoNestLogger(logger);
}

async function openDatabase(config: AppConfig): Promise<{ url: string; embedded: EmbeddedPostgres | null }> {
  if (config.databaseUrl) {
    await probeDatabase(config.databaseUrl); // unreachable or refusing: one line naming host:port
    return { url: config.databaseUrl, embedded: null };
  }
  try {
    const embedded = await startEmbeddedPostgres(config.dataDir);
    return { url: embedded.url, embedded };
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) {
      throw error;
    }
    throw new CliError(
      `The data folder ${config.dataDir} is in use by the running server. Stop the server first, ` +
        'or issue tokens through the API instead (POST /api/v1/tokens with an admin token).',
      EXIT_FAILURE,
    );
  }
}

export async function runCli(argv: string[]): Promise<number> {
  let context: INestApplicationContext | null = null;
  let embedded: EmbeddedPostgres | null = null;
  try {
    // One clock for the whole command: its arguments' checks, its request id and the services' writes.
    const clock = new Clock();
    const command = parseCommand(argv, clock.now());
    if (command.kind === 'help') {
      print(USAGE);
      return EXIT_OK;
    }
    // Quiet by default: a command's output is for people and scripts, not a log stream.
    const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL?.trim() || 'warn' });
    const database = await openDatabase(config);
    embedded = database.embedded;
    context = await NestFactory.createApplicationContext(
      CliModule.forRoot(config, database.url, database.embedded ? 1 : config.databasePoolMax, clock),
      {
        logger: stderrLogger(config),
        abortOnError: false,
      },
    );
    const commands = new CliCommands(
      context.get(TenantsService),
      context.get(TokensService),
      print,
      { requestId: newId('req', clock.now()), actor: { type: 'cli', id: null } },
      clock,
    );
    await commands.run(command);
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CliError) {
      return fail(error.message, error.exitCode);
    }
    // duplicate_tenant, not_found and the like: the arguments named something the database refuses.
    if (error instanceof ApiError) {
      return fail(error.message, EXIT_USAGE);
    }
    if (error instanceof ConfigError) {
      return fail(error.message, EXIT_FAILURE);
    }
    return fail(error instanceof Error ? error.message : String(error), EXIT_FAILURE);
  } finally {
    await context?.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
  }
}

void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
  // Everything is closed by now; should a stray handle keep the process up, do not hang the terminal.
  setTimeout(() => process.exit(code), 3000).unref();
});
