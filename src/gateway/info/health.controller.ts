import { Controller, Get } from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import { ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { databaseUnavailableError } from '../../common/errors/postgres-errors';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope';
import { Public } from '../../common/auth/auth.decorators';
import { DatabaseHealth } from '../../database/database-health';

class HealthDto {
  @ApiProperty({ example: 'ok' }) status: string;
  @ApiProperty({ example: { database: 'ok' }, required: false }) checks?: Record<string, string>;
}

/** Probes for load balancers and orchestrators: public and outside the rate limit. */
@ApiTags('Gateway')
@Public()
@SkipThrottle()
@Controller('health')
export class HealthController {
  constructor(private readonly database: DatabaseHealth) {}

  @Get('live')
  @ApiOperation({ summary: 'The process is up' })
  @ApiEnvelope(HealthDto)
  live(): HealthDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'The process can serve: the database answers' })
  @ApiEnvelope(HealthDto)
  @ApiErrors('service_unavailable')
  async ready(): Promise<HealthDto> {
    try {
      await this.database.ping();
    } catch {
      // Within DATABASE_ACQUIRE_TIMEOUT_MS when the pool is exhausted, so a probe never hangs.
      throw databaseUnavailableError('The database is unreachable or has no free connection.');
    }
    return { status: 'ok', checks: { database: 'ok' } };
  }
}
