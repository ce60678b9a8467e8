import { ApiProperty, ApiPropertyOptional, OmitType, ApiSchema } from '@nestjs/swagger';
import { IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { IsFreeText, IsTrimmedText, Trim } from '../../common/validation/text';
import type { Service } from '../provisioning.entity';
import { CAP_STATES, CapState, SERVICE_STATUSES, ServiceStatus } from '../service-status';
import { IsIpv6Prefix, IsMacAddress, IsUnicastIpv4, PPPOE_PASSWORD, PPPOE_USERNAME } from './service-fields';
import { Optional, OptionalNullable } from '../../common/validation/optional';
import { OneOrMoreOf } from '../../common/validation/comma-list';

const PASSWORD_DESCRIPTION =
  'Write-only: 8–128 printable ASCII characters, kept for the network to check and never returned, logged or sent ' +
  'in an event.';

const POOL_DESCRIPTION =
  'An IPv4 pool of the tenant (docs/network.md, "IP pools"). A static pool gives the service its next free address ' +
  '(or the one `static_ipv4` names) as `static_ipv4`: 409 `pool_exhausted` when none is left. A dynamic pool is ' +
  'sent to the NAS as `Framed-Pool` and the NAS picks the address.';
const IPV6_POOL_DESCRIPTION =
  'An IPv6 pool of the tenant. A static pool delegates the service its next free prefix (or the one ' +
  '`delegated_ipv6_prefix` names); a dynamic one is sent to the NAS as `Delegated-IPv6-Prefix-Pool`.';
const PREFIX_DESCRIPTION =
  'The IPv6 prefix delegated to the service (`Delegated-IPv6-Prefix`), of the delegated length of the static IPv6 ' +
  'pool that holds it; 409 `address_in_use` when another service holds it.';

@ApiSchema({ description: 'A service to order for a subscriber: its plan and network identity.' })
export class CreateServiceDto {
  @ApiProperty({ example: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'An active plan of this tenant.' })
  @IsTrimmedText(64)
  plan_id: string;

  @ApiProperty({
    example: 'ada.lovelace',
    description: '3–64 of A–Z a–z 0–9 . _ @ -; unique among the tenant’s services that are not terminated.',
  })
  @Trim()
  @IsString()
  @Matches(PPPOE_USERNAME, { message: 'pppoe_username must be 3 to 64 of A-Z a-z 0-9 . _ @ -' })
  pppoe_username: string;

  @ApiProperty({ example: 'correct-horse-42', writeOnly: true, description: PASSWORD_DESCRIPTION })
  @IsString()
  @Matches(PPPOE_PASSWORD, { message: 'pppoe_password must be 8 to 128 printable ASCII characters' })
  pppoe_password: string;

  @ApiPropertyOptional({
    example: '203.0.113.10',
    description:
      'A unicast IPv4 address; unique among the tenant’s services that are not terminated. Inside a static pool of ' +
      'the tenant it is allocated from that pool (409 `address_in_use` when another service holds it); outside ' +
      'every pool it is taken as it is. With `ip_pool_id`: the address of that pool to take.',
  })
  @Optional()
  @Trim()
  @IsUnicastIpv4()
  static_ipv4?: string;

  @ApiPropertyOptional({
    example: 'ipp_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: POOL_DESCRIPTION,
  })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(64)
  ip_pool_id?: string;

  @ApiPropertyOptional({ example: 'ipp_01JD3Z6W3R4T5Y6U7I8O9P0QAC', description: IPV6_POOL_DESCRIPTION })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(64)
  ipv6_pool_id?: string;

  @ApiPropertyOptional({ example: '2001:db8:100:100::/56', maxLength: 49, description: PREFIX_DESCRIPTION })
  @Optional()
  @Trim()
  @IsIpv6Prefix()
  delegated_ipv6_prefix?: string;

  @ApiPropertyOptional({
    example: 'AA-BB-CC-00-11-22',
    description: 'Any usual form; answered as aa:bb:cc:00:11:22.',
  })
  @Optional()
  @IsMacAddress()
  cpe_mac?: string;

  @ApiPropertyOptional({ example: '12 Fibre Lane, Springfield', maxLength: 500 })
  @Optional()
  @IsTrimmedText(500)
  installation_address?: string;
}

/** PATCH: what the network sees (password, static IP) produces a modify order; cpe_mac and the address do not. */
@ApiSchema({
  description:
    'The service fields to change; absent ones stay as they are (a change reaches the network by a modify order).',
})
export class UpdateServiceDto {
  @ApiPropertyOptional({ example: 'battery-staple-7', writeOnly: true, description: PASSWORD_DESCRIPTION })
  // Never cleared: null is refused (422 validation_failed), not written.
  @ValidateIf((_object, value) => value !== undefined)
  @IsString()
  @Matches(PPPOE_PASSWORD, { message: 'pppoe_password must be 8 to 128 printable ASCII characters' })
  pppoe_password?: string;

  @ApiPropertyOptional({
    example: '203.0.113.11',
    nullable: true,
    type: String,
    description: 'A unicast IPv4 address unique among live services; null: a dynamic address.',
  })
  @OptionalNullable()
  @Trim()
  @IsUnicastIpv4()
  static_ipv4?: string | null;

  @ApiPropertyOptional({
    example: 'ipp_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    nullable: true,
    type: String,
    description: `${POOL_DESCRIPTION} null: no pool (and no address of one).`,
  })
  @OptionalNullable()
  @Trim()
  @IsString()
  @MaxLength(64)
  ip_pool_id?: string | null;

  @ApiPropertyOptional({
    example: 'ipp_01JD3Z6W3R4T5Y6U7I8O9P0QAC',
    nullable: true,
    type: String,
    description: `${IPV6_POOL_DESCRIPTION} null: none.`,
  })
  @OptionalNullable()
  @Trim()
  @IsString()
  @MaxLength(64)
  ipv6_pool_id?: string | null;

  @ApiPropertyOptional({
    example: '2001:db8:100:200::/56',
    nullable: true,
    type: String,
    maxLength: 49,
    description: `${PREFIX_DESCRIPTION} null: none.`,
  })
  @OptionalNullable()
  @Trim()
  @IsIpv6Prefix()
  delegated_ipv6_prefix?: string | null;

  @ApiPropertyOptional({
    example: 'aa:bb:cc:00:11:23',
    nullable: true,
    type: String,
    description: "The customer router's MAC address, any usual form; null clears it.",
  })
  @OptionalNullable()
  @IsMacAddress()
  cpe_mac?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 500 })
  @OptionalNullable()
  @IsFreeText(500)
  installation_address?: string | null;
}

export class ListServicesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(64)
  subscriber_id?: string;

  @OneOrMoreOf(SERVICE_STATUSES, { description: 'Only services in one of these states.' })
  status?: ServiceStatus[];

  @ApiPropertyOptional({ example: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(64)
  plan_id?: string;

  @ApiPropertyOptional({ example: 'ada.lovelace', description: 'Exact match.' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(64)
  pppoe_username?: string;
}

/** GET /subscribers/{id}/services: the filters of GET /services but subscriber_id, which the path gives. */
export class ListSubscriberServicesQueryDto extends OmitType(ListServicesQueryDto, [
  'subscriber_id',
] as const) {}

@ApiSchema({
  description: 'An internet service of a subscriber: plan, status and network identity (never the password).',
})
export class ServiceDto {
  @ApiProperty({ example: 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber served.' })
  subscriber_id: string;

  @ApiProperty({
    example: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The current plan (speeds, price); a change_plan order changes it when it completes.',
  })
  plan_id: string;

  @ApiProperty({
    enum: SERVICE_STATUSES,
    example: ServiceStatus.Pending,
    description:
      'pending → active ⇄ suspended, any → terminated; moved only when its provisioning order completes.',
  })
  status: ServiceStatus;

  @ApiProperty({
    example: 'splynx-svc-1042',
    nullable: true,
    type: String,
    description:
      'Its id in the system it was imported from (a `services` import matches its rows by it, docs/imports.md); null for a service created here.',
  })
  external_id: string | null;

  @ApiProperty({
    example: 'ada.lovelace',
    description: 'The PPPoE login within the tenant; the network sees it as `radius_username`.',
  })
  pppoe_username: string;

  @ApiProperty({
    example: 'acme-fiber/ada.lovelace',
    description: 'The login the CPE sends over PPPoE: `<tenant slug>/<pppoe_username>` (docs/network.md).',
  })
  radius_username: string;

  @ApiProperty({
    example: '203.0.113.10',
    nullable: true,
    type: String,
    description: 'The fixed address the network gives this service; null: a dynamic one.',
  })
  static_ipv4: string | null;

  @ApiProperty({
    example: null,
    nullable: true,
    type: String,
    description: 'The IPv4 pool its static address came from, or the dynamic pool the NAS gives it one from.',
  })
  ip_pool_id: string | null;

  @ApiProperty({
    example: null,
    nullable: true,
    type: String,
    description: 'The IPv6 pool its delegated prefix came from, or the dynamic one the NAS delegates from.',
  })
  ipv6_pool_id: string | null;

  @ApiProperty({
    example: null,
    nullable: true,
    type: String,
    description: 'The IPv6 prefix delegated to it (Delegated-IPv6-Prefix); null: none.',
  })
  delegated_ipv6_prefix: string | null;

  @ApiProperty({
    example: 'aa:bb:cc:00:11:22',
    nullable: true,
    type: String,
    description: "The customer router's MAC address, lower case with colons; null: not recorded.",
  })
  cpe_mac: string | null;

  @ApiProperty({ example: '12 Fibre Lane, Springfield', nullable: true, type: String })
  installation_address: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When its activate order first completed; null while pending.',
  })
  activated_at: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When its terminate order completed; null until terminated.',
  })
  terminated_at: string | null;

  @ApiProperty({
    enum: CAP_STATES,
    example: CapState.Normal,
    description:
      "What its plan's data cap does to it now: normal, throttled (the plan's throttle rates) or blocked, until the " +
      'next billing period or a top-up (GET /services/{id}/data-cap).',
  })
  cap_state: CapState;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  updated_at: string;

  /** Never the password: the answer, the events and the logs are built from this. */
  static from(service: Service): ServiceDto {
    return {
      id: service.id,
      subscriber_id: service.subscriberId,
      plan_id: service.planId,
      status: service.status,
      external_id: service.externalId,
      pppoe_username: service.pppoeUsername,
      radius_username: service.radiusUsername,
      static_ipv4: service.staticIpv4,
      ip_pool_id: service.ipPoolId,
      ipv6_pool_id: service.ipv6PoolId,
      delegated_ipv6_prefix: service.delegatedIpv6Prefix,
      cpe_mac: service.cpeMac,
      installation_address: service.installationAddress,
      activated_at: service.activatedAt ? service.activatedAt.toISOString() : null,
      terminated_at: service.terminatedAt ? service.terminatedAt.toISOString() : null,
      cap_state: service.capState,
      created_at: service.createdAt.toISOString(),
      updated_at: service.updatedAt.toISOString(),
    };
  }
}
