import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsEmail, IsIn, IsObject, IsString, Matches, ValidateNested } from 'class-validator';
import { IsMetadata } from '../../common/validation/is-metadata';
import { IsTrimmedText, Trim } from '../../common/validation/text';
import { CREATABLE_STATUSES, SubscriberStatus } from '../subscriber-status';
import {
  AddressDto,
  E164,
  TAX_EXEMPT_DESCRIPTION,
  TAX_EXEMPT_REASON_DESCRIPTION,
  TAX_ID_DESCRIPTION,
} from './subscriber-fields';
import { ApiMetadata } from '../../common/swagger/api-types';
import { Optional } from '../../common/validation/optional';

@ApiSchema({ description: 'A new subscriber: who they are and how to reach them.' })
export class CreateSubscriberDto {
  @ApiPropertyOptional({
    example: 'crm-000123',
    description:
      'Your id for this subscriber; unique per tenant, so syncing twice cannot create a duplicate.',
  })
  @Optional()
  @IsTrimmedText(200)
  external_id?: string;

  @ApiProperty({ example: 'Ada Lovelace', minLength: 1, maxLength: 200 })
  @IsTrimmedText(200)
  full_name: string;

  @ApiPropertyOptional({
    example: 'ada@example.net',
    description: 'Unique (case-insensitive) among live subscribers.',
  })
  @Optional()
  @IsTrimmedText(254)
  @IsEmail({}, { message: 'email must be a valid email address' })
  email?: string;

  @ApiPropertyOptional({ example: '+14155550123', description: 'E.164.' })
  @Optional()
  @Trim()
  @IsString()
  @Matches(E164, { message: 'phone must be in E.164 format, e.g. +14155550123' })
  phone?: string;

  @ApiProperty({
    enum: CREATABLE_STATUSES,
    example: SubscriberStatus.Prospect,
    description: 'The starting lifecycle state; later moves go through POST /subscribers/{id}/status.',
  })
  @IsIn(CREATABLE_STATUSES, { message: `status must be one of ${CREATABLE_STATUSES.join(', ')}` })
  status: SubscriberStatus;

  @ApiPropertyOptional({
    example: 'bp_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'A billing profile of this tenant.',
  })
  @Optional()
  @IsTrimmedText(64)
  billing_profile_id?: string;

  @ApiPropertyOptional({ type: AddressDto })
  @Optional()
  @IsObject({ message: 'address must be an object' })
  @ValidateNested()
  @Type(() => AddressDto)
  address?: AddressDto;

  @ApiMetadata({ example: { plan: 'fiber-500', referral: 'door-to-door' }, required: false })
  @Optional()
  @IsMetadata()
  metadata?: Record<string, string | number | boolean | null>;

  @ApiPropertyOptional({ example: false, default: false, description: TAX_EXEMPT_DESCRIPTION })
  @Optional()
  @IsBoolean()
  tax_exempt?: boolean;

  @ApiPropertyOptional({
    example: 'Registered charity, certificate 2026-0117',
    maxLength: 500,
    description: TAX_EXEMPT_REASON_DESCRIPTION,
  })
  @Optional()
  @IsTrimmedText(500)
  tax_exempt_reason?: string;

  @ApiPropertyOptional({ example: 'NL123456789B01', maxLength: 64, description: TAX_ID_DESCRIPTION })
  @Optional()
  @IsTrimmedText(64)
  tax_id?: string;
}
