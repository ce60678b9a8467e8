import { Controller, Get } from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import { ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { databaseUnavailableError } from '../../common/errors/postgres-errors';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope';
import { Public } from '../../common/auth/auth.decorators';
import { DatabaseHealth } from '../../database/database-health';
import { ApiStringMap } from '../../common/swagger/api-types';

class HealthDto {
  @ApiProperty({ example: 'ok' }) status: string;
  @ApiStringMap({ example: { database: 'ok' }, required: false }) checks?: Record<string, string>;
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
  getLiveness(): HealthDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'The process can serve: the database answers' })
  @ApiEnvelope(HealthDto)
  @ApiErrors('service_unavailable')
  async getReadiness(): Promise<HealthDto> {
    try {
      await this.database.ping();
    } catch {
      // Within DATABASE_ACQUIRE_TIMEOUT_MS when the pool is exhausted, so a probe never hangs.
      throw databaseUnavailableError('The database is unreachable or has no free connection.');
    }
    return { status: 'ok', checks: { database: 'ok' } };
  }
}
