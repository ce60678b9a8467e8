import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsString, IsUrl, Matches, MaxLength } from 'class-validator';
import { Optional, OptionalNullable } from '../../common/validation/optional';
import {
  DEFAULT_WALLED_GARDEN_ADDRESS_LIST,
  DEFAULT_WALLED_GARDEN_FILTER_ID,
  SUSPENSION_MODES,
  type SuspensionMode,
} from '../network/suspension-profile';

/** A RouterOS address-list name or a Filter-Id: what a NAS's configuration names, 1–64 of A–Z a–z 0–9 . _ : -. */
export const NAS_NAME = /^[A-Za-z0-9._:-]{1,64}$/;
export const MAX_PAYMENT_PAGE_URL = 2000;

const MODE_DESCRIPTION =
  '`reject` (default): a suspended service\'s login is rejected (Access-Reject, Reply-Message "Service suspended"). ' +
  '`walled_garden`: it is accepted into a restricted profile, Mikrotik-Address-List and Filter-Id (the NAS maps them ' +
  'to a redirect to payment_page_url, also sent as WISPr-Redirection-URL); requires payment_page_url. A change is ' +
  "carried to the network at once: the tenant's suspended services move to the new profile and their sessions " +
  'online are disconnected, so they log in again into it (docs/network.md).';
const URL_DESCRIPTION =
  'The https page a suspended subscriber is redirected to (to pay); required by walled_garden. null clears it.';
const LIST_DESCRIPTION = `The MikroTik address list a walled-garden login is put in (Mikrotik-Address-List); default \`${DEFAULT_WALLED_GARDEN_ADDRESS_LIST}\`. 1–64 of A–Z a–z 0–9 . _ : -.`;
const FILTER_DESCRIPTION = `The Filter-Id of a walled-garden login, which the NAS maps to its redirecting filter; default \`${DEFAULT_WALLED_GARDEN_FILTER_ID}\`. 1–64 of A–Z a–z 0–9 . _ : -.`;

@ApiSchema({ description: 'The network settings to change; what is left out stays.' })
export class UpdateNetworkSettingsDto {
  @ApiPropertyOptional({ enum: SUSPENSION_MODES, example: 'walled_garden', description: MODE_DESCRIPTION })
  @Optional()
  @IsIn(SUSPENSION_MODES, { message: `suspension_mode must be one of ${SUSPENSION_MODES.join(', ')}` })
  suspension_mode?: SuspensionMode;

  @ApiPropertyOptional({
    example: 'https://pay.acme-fiber.example/suspended',
    maxLength: MAX_PAYMENT_PAGE_URL,
    nullable: true,
    type: String,
    format: 'uri',
    description: URL_DESCRIPTION,
  })
  @OptionalNullable()
  @IsString()
  @MaxLength(MAX_PAYMENT_PAGE_URL)
  @IsUrl(
    { protocols: ['https'], require_protocol: true, disallow_auth: true, require_tld: false },
    { message: 'payment_page_url must be an https URL without credentials' },
  )
  payment_page_url?: string | null;

  @ApiPropertyOptional({ example: 'suspended', pattern: NAS_NAME.source, description: LIST_DESCRIPTION })
  @Optional()
  @IsString()
  @Matches(NAS_NAME, { message: 'walled_garden_address_list must be 1 to 64 of A-Z a-z 0-9 . _ : -' })
  walled_garden_address_list?: string;

  @ApiPropertyOptional({
    example: 'walled-garden',
    pattern: NAS_NAME.source,
    description: FILTER_DESCRIPTION,
  })
  @Optional()
  @IsString()
  @Matches(NAS_NAME, { message: 'walled_garden_filter_id must be 1 to 64 of A-Z a-z 0-9 . _ : -' })
  walled_garden_filter_id?: string;
}

@ApiSchema({ description: "The tenant's network settings: what a suspended service's login gets." })
export class NetworkSettingsDto {
  @ApiProperty({ enum: SUSPENSION_MODES, example: 'reject', description: MODE_DESCRIPTION })
  suspension_mode: SuspensionMode;

  @ApiProperty({
    example: 'https://pay.acme-fiber.example/suspended',
    maxLength: MAX_PAYMENT_PAGE_URL,
    nullable: true,
    type: String,
    format: 'uri',
    description: URL_DESCRIPTION,
  })
  payment_page_url: string | null;

  @ApiProperty({ example: 'suspended', pattern: NAS_NAME.source, description: LIST_DESCRIPTION })
  walled_garden_address_list: string;

  @ApiProperty({ example: 'walled-garden', pattern: NAS_NAME.source, description: FILTER_DESCRIPTION })
  walled_garden_filter_id: string;

  @ApiProperty({
    example: true,
    description:
      'Whether the network has these settings: false from a change until the provisioning worker has rewritten the ' +
      "tenant's suspended group and disconnected its suspended sessions online.",
  })
  applied: boolean;

  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'When the network last received a change (null: never changed).',
  })
  applied_at: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'null while the defaults apply.',
  })
  updated_at: string | null;
}
