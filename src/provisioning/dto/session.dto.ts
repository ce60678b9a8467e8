import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

import { PageQueryDto } from '../../common/pagination';
import { ApiByteCount, ApiInteger } from '../../common/swagger/api-types';
import { IsDateOnly } from '../../common/validation/is-date-only';
import type { RadiusSession } from '../radius.repository';
import { Optional } from '../../common/validation/optional';

const BYTES_IN =
  'Octets the NAS received from the subscriber (Acct-Input-Octets with its gigawords): upload.';
const BYTES_OUT = 'Octets the NAS sent to the subscriber (Acct-Output-Octets with its gigawords): download.';

/** `created_gte` / `created_lt` filter on the session's start. */
export class ListSessionsQueryDto extends PageQueryDto {}

/** One accounting session of a service, as FreeRADIUS recorded it in radacct from the NAS's accounting packets. */
@ApiSchema({ description: 'A RADIUS accounting session of a service: when, where and how many bytes.' })
export class SessionDto {
  @ApiProperty({ example: 'ses_4711', description: "radacct's row, prefixed." })
  id: string;

  @ApiProperty({ example: 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The service whose login it is.' })
  service_id: string;

  @ApiProperty({ example: '81A00004', description: 'Acct-Session-Id, as the NAS names the session.' })
  acct_session_id: string;

  @ApiProperty({
    example: 'acme-fiber/ada.lovelace',
    description: "The login the NAS reported: the service's radius_username.",
  })
  username: string;

  @ApiProperty({ example: true, description: 'No Stop has been received for it.' })
  online: boolean;

  @ApiProperty({
    example: '2026-11-21T10:00:00.000Z',
    nullable: true,
    type: String,
    description: 'Acct-Start time from the NAS; null when no Start was received.',
  })
  started_at: string | null;

  @ApiProperty({
    example: '2026-11-21T10:05:00.000Z',
    nullable: true,
    type: String,
    description: 'Its last Interim-Update or Stop.',
  })
  updated_at: string | null;

  @ApiProperty({
    example: null,
    nullable: true,
    type: String,
    description: 'When its Stop was received; null while online.',
  })
  stopped_at: string | null;

  @ApiInteger({
    example: 300,
    nullable: true,
    description: 'Acct-Session-Time of its last packet, in seconds.',
  })
  duration_s: number | null;

  @ApiProperty({ example: '192.0.2.10', description: 'The NAS that reported the session.' })
  nas_ip: string;

  @ApiProperty({
    example: '100.64.0.17',
    nullable: true,
    type: String,
    description: 'The address the subscriber was given (Framed-IP-Address); null: not reported.',
  })
  framed_ip: string | null;

  @ApiByteCount({ example: 1048576, description: BYTES_IN })
  bytes_in: number;

  @ApiByteCount({ example: 73400320, description: BYTES_OUT })
  bytes_out: number;

  @ApiProperty({
    example: null,
    nullable: true,
    type: String,
    description: 'Acct-Terminate-Cause of its Stop.',
  })
  terminate_cause: string | null;

  static from(serviceId: string, session: RadiusSession): SessionDto {
    return {
      id: `ses_${session.radacctId}`,
      service_id: serviceId,
      acct_session_id: session.acctSessionId,
      username: session.username,
      online: session.stoppedAt === null,
      started_at: session.startedAt?.toISOString() ?? null,
      updated_at: session.updatedAt?.toISOString() ?? null,
      stopped_at: session.stoppedAt?.toISOString() ?? null,
      duration_s: session.sessionTimeS,
      nas_ip: session.nasIp,
      framed_ip: session.framedIp,
      bytes_in: session.bytesIn,
      bytes_out: session.bytesOut,
      terminate_cause: session.terminateCause,
    };
  }
}

export class UsageQueryDto {
  @ApiPropertyOptional({
    example: '2026-11-01',
    description: 'First UTC day (YYYY-MM-DD). Default: 29 days before `to`.',
  })
  @Optional()
  @IsDateOnly()
  from?: string;

  @ApiPropertyOptional({
    example: '2026-11-30',
    description: 'Last UTC day, included. Default: today (UTC).',
  })
  @Optional()
  @IsDateOnly()
  to?: string;
}

@ApiSchema({ description: "A service's traffic on one UTC day." })
export class UsageDayDto {
  @ApiProperty({ example: '2026-11-21', description: 'The UTC day (YYYY-MM-DD).' })
  date: string;

  @ApiByteCount({ example: 1048576, description: BYTES_IN })
  bytes_in: number;

  @ApiByteCount({ example: 73400320, description: BYTES_OUT })
  bytes_out: number;
}

@ApiSchema({ description: "A service's traffic over the whole range." })
export class UsageTotalDto {
  @ApiByteCount({ example: 1048576, description: 'Upload over the whole range, in octets.' })
  bytes_in: number;

  @ApiByteCount({ example: 73400320, description: 'Download over the whole range, in octets.' })
  bytes_out: number;
}

/** A service's traffic per UTC day, every day of the range (0 where there was none), and the range's total. */
@ApiSchema({ description: "A service's traffic per UTC day over a range, and the total." })
export class UsageDto {
  @ApiProperty({ example: 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The service measured.' })
  service_id: string;

  @ApiProperty({ example: '2026-11-01', description: 'The first UTC day of the range (YYYY-MM-DD).' })
  from: string;

  @ApiProperty({ example: '2026-11-30', description: 'The last UTC day of the range, included.' })
  to: string;

  @ApiProperty({ type: [UsageDayDto] })
  days: UsageDayDto[];

  @ApiProperty({ type: UsageTotalDto, description: 'The sum of `days`.' })
  total: UsageTotalDto;
}
