import { Controller, Get } from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import { ApiOperation, ApiProperty, ApiTags, ApiSchema } from '@nestjs/swagger';
import { ApiError } from '../../common/errors/api-error';
import { databaseUnavailableError } from '../../common/errors/postgres-errors';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope';
import { Public } from '../../common/auth/auth.decorators';
import { DatabaseHealth } from '../../database/database-health';
import { BootstrapService } from '../bootstrap.service';
import { ApiStringMap } from '../../common/swagger/api-types';

@ApiSchema({
  description: 'Whether the server is ready to serve, and the state of each dependency it checks.',
})
class HealthDto {
  @ApiProperty({
    example: 'ok',
    description: 'ok when this probe passes (a failing one answers an error instead).',
  })
  status: string;
  @ApiStringMap({
    example: { database: 'ok' },
    required: false,
    description: 'Each dependency checked and its state; on the readiness probe only.',
  })
  checks?: Record<string, string>;
}

/** Probes for load balancers and orchestrators: public and outside the rate limit. */
@ApiTags('Gateway')
@Public()
@SkipThrottle()
@Controller('health')
export class HealthController {
  constructor(
    private readonly database: DatabaseHealth,
    private readonly bootstrap: BootstrapService,
  ) {}

  @Get('live')
  @ApiOperation({
    description:
      'Answers 200 while the process runs, without touching the database: a liveness probe. Public, not rate limited, and it reads no input.',
    summary: 'The process is up',
  })
  @ApiEnvelope(HealthDto)
  getLiveness(): HealthDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    summary: 'The process can serve: its start has finished and the database answers',
    description:
      'Answers 503 service_unavailable while the server is still starting: the port is bound before the ' +
      'bootstrap token (API_BOOTSTRAP_TOKEN) is registered, and a request sent then would be refused.',
  })
  @ApiEnvelope(HealthDto)
  @ApiErrors('service_unavailable')
  async getReadiness(): Promise<HealthDto> {
    if (!this.bootstrap.done) {
      throw new ApiError('service_unavailable', 'The server is still starting; retry shortly.', null, {
        'Retry-After': '1',
      });
    }
    try {
      await this.database.ping();
    } catch {
      // Within DATABASE_ACQUIRE_TIMEOUT_MS when the pool is exhausted, so a probe never hangs.
      throw databaseUnavailableError('The database is unreachable or has no free connection.');
    }
    return { status: 'ok', checks: { database: 'ok' } };
  }
}
