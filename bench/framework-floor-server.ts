/**
 * Baseline (c), the framework floor: what Nest + Express + class-validator cost on the create path before any of the
 * app's own work (auth, rate limit, event, transaction, envelope, logs), so the app's create is compared with the floor of
 * its own stack and not only with bare node:http (baseline (a)).
 *
 * A bare NestJS app on @nestjs/platform-express (the packages the app uses): no guards, no interceptors, no logging, ETag
 * off, Nest's stock ValidationPipe ({ whitelist, forbidNonWhitelisted, transform }) as the global pipe, and one controller,
 * POST /api/v1/subscribers (201), whose body is the app's own CreateSubscriberDto. It does exactly baseline (a)'s
 * single-row INSERT through the same pg pool of the app's size and answers the same small JSON body
 * (bench/baseline-insert.ts, shared with bench/baseline-server.ts).
 * Run as a child of bench/run.ts; env: DATABASE_URL, TENANT_ID, POOL_MAX. Reports {type:'ready', port} over IPC.
 */
import 'reflect-metadata';
import { Body, Controller, HttpCode, Module, Post, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import { CreateSubscriberDto } from '../src/subscribers/dto/create-subscriber.dto';
import { baselinePool, insertSubscriber } from './baseline-insert';

const tenantId = process.env.TENANT_ID ?? '';
const pool = baselinePool();

@Controller('api/v1/subscribers')
class FloorSubscribersController {
  @Post()
  @HttpCode(201)
  async create(@Body() dto: CreateSubscriberDto): Promise<object> {
    try {
      return await insertSubscriber(pool, tenantId, dto);
    } catch (error) {
      process.stderr.write(`framework floor insert failed: ${String(error)}\n`);
      throw error; // Nest's own exception filter answers 500
    }
  }
}

@Module({ controllers: [FloorSubscribersController] })
class FloorModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(FloorModule, { logger: false });
  app.getHttpAdapter().getInstance().set('etag', false);
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer();

  process.on('SIGTERM', () => {
    void app.close().catch(() => undefined);
    void pool.end().finally(() => process.exit(0));
  });
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `framework floor failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
