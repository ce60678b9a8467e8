import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { ApiInteger } from '../../common/swagger/api-types';
import { IsFreeText, IsTrimmedText, Trim } from '../../common/validation/text';
import { NAS_TYPES, type NasDevice } from '../provisioning.entity';
import { IsNasIpv4 } from './service-fields';

/** A RADIUS shared secret: 8–128 printable ASCII characters without spaces. */
export const NAS_SECRET = /^[\x21-\x7e]{8,128}$/;
export const DEFAULT_COA_PORT = 3799;

const present = (_object: object, value: unknown) => value !== undefined;

const SECRET_DESCRIPTION =
  'Write-only: the RADIUS shared secret of this NAS (8–128 printable ASCII characters, no spaces). FreeRADIUS checks ' +
  'its requests with it and the API signs Disconnect and CoA requests with it; never returned, logged or sent in an ' +
  'event.';
const IP_DESCRIPTION =
  'The IPv4 address the NAS sends RADIUS requests from (FreeRADIUS knows its clients by address) and takes ' +
  'Disconnect/CoA requests on. Unique across the platform: one address is one FreeRADIUS client.';

@ApiSchema({ description: 'A NAS to register: its address, shared secret and kind.' })
export class CreateNasDto {
  @ApiProperty({ example: 'bng-north-1', maxLength: 100 })
  @IsTrimmedText(100)
  name: string;

  @ApiProperty({ example: '192.0.2.10', description: IP_DESCRIPTION })
  @Trim()
  @IsNasIpv4()
  ip: string;

  @ApiProperty({ example: 'n4s-shared-s3cret', writeOnly: true, description: SECRET_DESCRIPTION })
  @IsString()
  @Matches(NAS_SECRET, { message: 'secret must be 8 to 128 printable ASCII characters without spaces' })
  secret: string;

  @ApiPropertyOptional({ enum: NAS_TYPES, default: 'other', description: "FreeRADIUS's nas.type." })
  @ValidateIf(present)
  @IsIn(NAS_TYPES, { message: `type must be one of ${NAS_TYPES.join(', ')}` })
  type: string = 'other';

  @ApiInteger({
    required: false,
    minimum: 1,
    maximum: 65535,
    default: DEFAULT_COA_PORT,
    description: 'UDP port of its RFC 5176 Disconnect/CoA listener.',
  })
  @ValidateIf(present)
  @IsInt()
  @Min(1)
  @Max(65535)
  coa_port: number = DEFAULT_COA_PORT;

  @ApiPropertyOptional({ example: 'North POP, rack 2', maxLength: 500, nullable: true, type: String })
  @ValidateIf((_object, value) => value !== undefined && value !== null)
  @IsFreeText(500)
  description?: string | null;
}

/** PATCH: any field; a new secret or address is written to FreeRADIUS's `nas` table with the registry. */
@ApiSchema({ description: 'The NAS fields to change; absent ones stay as they are.' })
export class UpdateNasDto {
  @ApiPropertyOptional({ example: 'bng-north-1' })
  @ValidateIf(present)
  @IsTrimmedText(100)
  name?: string;

  @ApiPropertyOptional({ example: '192.0.2.11', description: IP_DESCRIPTION })
  @ValidateIf(present)
  @Trim()
  @IsNasIpv4()
  ip?: string;

  @ApiPropertyOptional({ example: 'n3w-shared-s3cret', writeOnly: true, description: SECRET_DESCRIPTION })
  @ValidateIf(present)
  @IsString()
  @Matches(NAS_SECRET, { message: 'secret must be 8 to 128 printable ASCII characters without spaces' })
  secret?: string;

  @ApiPropertyOptional({ enum: NAS_TYPES, description: "FreeRADIUS's nas.type." })
  @ValidateIf(present)
  @IsIn(NAS_TYPES, { message: `type must be one of ${NAS_TYPES.join(', ')}` })
  type?: string;

  @ApiInteger({
    required: false,
    minimum: 1,
    maximum: 65535,
    description: 'UDP port of its RFC 5176 Disconnect/CoA listener.',
  })
  @ValidateIf(present)
  @IsInt()
  @Min(1)
  @Max(65535)
  coa_port?: number;

  @ApiPropertyOptional({ example: 'North POP, rack 3', maxLength: 500, nullable: true, type: String })
  @ValidateIf((_object, value) => value !== undefined && value !== null)
  @IsFreeText(500)
  description?: string | null;
}

export class ListNasQueryDto extends PageQueryDto {}

/** A registered NAS; its secret is write-only and never answered. */
@ApiSchema({
  description: 'A network access server FreeRADIUS accepts as a client; its secret is never shown.',
})
export class NasDto {
  @ApiProperty({ example: 'nas_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'bng-north-1' })
  name: string;

  @ApiProperty({ example: '192.0.2.10' })
  ip: string;

  @ApiProperty({
    enum: NAS_TYPES,
    example: 'mikrotik',
    description: "The vendor kind, FreeRADIUS's nas.type.",
  })
  type: string;

  @ApiInteger({ example: DEFAULT_COA_PORT, description: 'UDP port of its RFC 5176 Disconnect/CoA listener.' })
  coa_port: number;

  @ApiProperty({ example: 'North POP, rack 2', nullable: true, type: String })
  description: string | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  updated_at: string;

  static from(nas: NasDevice): NasDto {
    return {
      id: nas.id,
      name: nas.name,
      ip: nas.ip,
      type: nas.type,
      coa_port: nas.coaPort,
      description: nas.description,
      created_at: nas.createdAt.toISOString(),
      updated_at: nas.updatedAt.toISOString(),
    };
  }
}
