import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, Matches, Max, MaxLength, Min, registerDecorator } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { ApiInteger } from '../../common/swagger/api-types';
import { Optional, OptionalNullable } from '../../common/validation/optional';
import { Trim } from '../../common/validation/text';
import { parseAddress, parseNetwork, parseRange } from '../ipam/ip-math';
import { POOL_KINDS, type IpPool } from '../ipam/ip-pool.entity';
import type { PoolCounts } from '../ipam/ip-pools.repository';

/** A pool's name is what the NAS knows its own pool by (Framed-Pool): no spaces or quotes. */
export const POOL_NAME = /^[A-Za-z0-9._-]{1,64}$/;
export const MAX_EXCLUDED = 256;
/** The longest cooldown a pool may ask for: 90 days. */
export const MAX_COOLDOWN_S = 90 * 86_400;

function custom(name: string, message: string, validate: (value: unknown) => boolean) {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name,
      target: object.constructor,
      propertyName: String(propertyName),
      options: { message: `${String(propertyName)} ${message}` },
      validator: { validate },
    });
}

const IsNetwork = () =>
  custom(
    'isNetwork',
    'must be an IPv4 or IPv6 network, e.g. 198.51.100.0/24 or 2001:db8:100::/40',
    (value) => typeof value === 'string' && parseNetwork(value) !== null,
  );

const IsIpAddress = () =>
  custom(
    'isIpAddress',
    'must be an IPv4 or IPv6 address',
    (value) => typeof value === 'string' && parseAddress(value) !== null,
  );

const IsAddressRanges = () =>
  custom(
    'isAddressRanges',
    `must be a list of at most ${MAX_EXCLUDED} addresses, ranges (first-last) or networks`,
    (value) =>
      Array.isArray(value) &&
      value.length <= MAX_EXCLUDED &&
      value.every((item) => typeof item === 'string' && item.length <= 100 && parseRange(item) !== null),
  );

const EXCLUDED_DESCRIPTION =
  'Addresses never handed out: single addresses, ranges `first-last` or networks, of the pool’s family (answered ' +
  'in canonical form). The network and broadcast addresses of an IPv4 pool and its gateway are never handed out ' +
  'anyway.';
/** What a released address waits by default: an hour, for the CPE's lease and the NAS's session to end. */
export const DEFAULT_COOLDOWN_S = 3600;
const COOLDOWN_DESCRIPTION =
  'Seconds a released address (its service terminated, or given another) waits before it is handed out again.';
const NAME_DESCRIPTION =
  'Unique in the tenant; a dynamic pool’s name is what the NAS knows its own pool by (sent as Framed-Pool). ' +
  '1–64 of A–Z a–z 0–9 . _ -.';

@ApiSchema({ description: 'An IP pool to create: its network, kind and what of it is never handed out.' })
export class CreateIpPoolDto {
  @ApiProperty({ example: 'static-north', maxLength: 64, description: NAME_DESCRIPTION })
  @Trim()
  @IsString()
  @Matches(POOL_NAME, { message: 'name must be 1 to 64 of A-Z a-z 0-9 . _ -' })
  name: string;

  @ApiProperty({
    example: '198.51.100.0/24',
    maxLength: 49,
    description:
      'The network, IPv4 or IPv6, without host bits. An IPv6 pool delegates prefixes of `delegated_prefix_length` ' +
      'from it. Pools of a tenant never overlap.',
  })
  @Trim()
  @IsNetwork()
  cidr: string;

  @ApiPropertyOptional({
    example: '198.51.100.1',
    nullable: true,
    type: String,
    maxLength: 45,
    description: 'An address inside the network, never handed out.',
  })
  @OptionalNullable()
  @Trim()
  @IsIpAddress()
  gateway?: string | null;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', maxLength: 100 },
    example: ['198.51.100.2-198.51.100.9'],
    maxItems: MAX_EXCLUDED,
    description: EXCLUDED_DESCRIPTION,
  })
  @Optional()
  @IsAddressRanges()
  excluded?: string[];

  @ApiProperty({
    enum: POOL_KINDS,
    example: 'static',
    description:
      '`static`: the API hands each service an address (or delegated prefix) of it; `dynamic`: the NAS does, and a ' +
      'service linked to it gets `Framed-Pool` (IPv4) or `Delegated-IPv6-Prefix-Pool` (IPv6) with its name.',
  })
  @IsIn(POOL_KINDS, { message: `kind must be one of ${POOL_KINDS.join(', ')}` })
  kind: string;

  @ApiInteger({
    required: false,
    nullable: true,
    minimum: 48,
    maximum: 64,
    example: 56,
    description:
      'IPv6 only: the length of each delegated prefix (default 56, or 64 for a pool of /57 or longer); must not be ' +
      'shorter than the pool’s. IPv4 pools hand out single addresses.',
  })
  @OptionalNullable()
  @IsInt()
  @Min(48)
  @Max(64)
  delegated_prefix_length?: number | null;

  @ApiPropertyOptional({
    example: 'nas_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    nullable: true,
    type: String,
    description: 'The NAS that serves this pool (a NAS of the tenant).',
  })
  @OptionalNullable()
  @Trim()
  @IsString()
  @MaxLength(64)
  nas_id?: string | null;

  @ApiInteger({
    required: false,
    minimum: 0,
    maximum: MAX_COOLDOWN_S,
    default: DEFAULT_COOLDOWN_S,
    example: 3600,
    description: COOLDOWN_DESCRIPTION,
  })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_COOLDOWN_S)
  cooldown_s: number = DEFAULT_COOLDOWN_S;
}

@ApiSchema({
  description: 'The pool fields to change; absent ones stay as they are. The network and kind are fixed.',
})
export class UpdateIpPoolDto {
  @ApiPropertyOptional({ example: 'static-north-2', maxLength: 64, description: NAME_DESCRIPTION })
  @Optional()
  @Trim()
  @IsString()
  @Matches(POOL_NAME, { message: 'name must be 1 to 64 of A-Z a-z 0-9 . _ -' })
  name?: string;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', maxLength: 100 },
    example: ['198.51.100.2-198.51.100.19'],
    maxItems: MAX_EXCLUDED,
    description: `${EXCLUDED_DESCRIPTION} Replaces the list; addresses already held stay with their services.`,
  })
  @Optional()
  @IsAddressRanges()
  excluded?: string[];

  @ApiPropertyOptional({
    example: 'nas_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    nullable: true,
    type: String,
    description: 'The NAS that serves this pool; null: none.',
  })
  @OptionalNullable()
  @Trim()
  @IsString()
  @MaxLength(64)
  nas_id?: string | null;

  @ApiInteger({
    required: false,
    minimum: 0,
    maximum: MAX_COOLDOWN_S,
    example: 600,
    description: COOLDOWN_DESCRIPTION,
  })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_COOLDOWN_S)
  cooldown_s?: number;
}

export class ListIpPoolsQueryDto extends PageQueryDto {}

@ApiSchema({ description: 'How much of a pool is in use, in addresses (IPv4) or delegated prefixes (IPv6).' })
export class IpPoolUtilisationDto {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    example: 244,
    description:
      'What may be handed out: the network less its excluded, gateway, network and broadcast addresses.',
  })
  size: number;

  @ApiInteger({ example: 12, description: 'Held by services (a dynamic pool’s are the NAS’s to count: 0).' })
  allocated: number;

  @ApiInteger({ example: 1, description: 'Released, waiting out their cooldown.' })
  cooling: number;

  @ApiProperty({ type: 'integer', format: 'int64', example: 231, description: 'size − allocated − cooling.' })
  free: number;
}

@ApiSchema({ description: 'An IP pool of the tenant and its utilisation.' })
export class IpPoolDto {
  @ApiProperty({ example: 'ipp_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'static-north' })
  name: string;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    enum: [4, 6],
    example: 4,
    description: 'The address family of its network.',
  })
  family: number;

  @ApiProperty({ example: '198.51.100.0/24' })
  cidr: string;

  @ApiProperty({ example: '198.51.100.1', nullable: true, type: String })
  gateway: string | null;

  @ApiProperty({ type: [String], example: ['198.51.100.2-198.51.100.9'] })
  excluded: string[];

  @ApiProperty({
    enum: POOL_KINDS,
    example: 'static',
    description: '`static`: the API hands out its addresses; `dynamic`: the NAS does (sent as Framed-Pool).',
  })
  kind: string;

  @ApiInteger({ nullable: true, example: null, description: 'IPv6: the length of each delegated prefix.' })
  delegated_prefix_length: number | null;

  @ApiProperty({ example: null, nullable: true, type: String })
  nas_id: string | null;

  @ApiInteger({ example: 3600, description: COOLDOWN_DESCRIPTION })
  cooldown_s: number;

  @ApiProperty({ type: IpPoolUtilisationDto })
  utilisation: IpPoolUtilisationDto;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  updated_at: string;

  static from(pool: IpPool, size: bigint, counts: PoolCounts): IpPoolDto {
    const used = counts.allocated + counts.cooling;
    return {
      id: pool.id,
      name: pool.name,
      family: pool.family,
      cidr: pool.cidr,
      gateway: pool.gateway,
      excluded: pool.excluded,
      kind: pool.kind,
      delegated_prefix_length: pool.delegatedPrefixLength,
      nas_id: pool.nasId,
      cooldown_s: pool.cooldownS,
      utilisation: {
        size: Number(size),
        allocated: counts.allocated,
        cooling: counts.cooling,
        free: Math.max(0, Number(size) - used),
      },
      created_at: pool.createdAt.toISOString(),
      updated_at: pool.updatedAt.toISOString(),
    };
  }
}
