import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsEmail, IsObject, IsString, Matches, ValidateIf, ValidateNested } from 'class-validator';
import { IsMetadata } from '../../common/validation/is-metadata';
import { IsTrimmedText, Trim } from '../../common/validation/text';
import {
  AddressDto,
  E164,
  TAX_EXEMPT_DESCRIPTION,
  TAX_EXEMPT_REASON_DESCRIPTION,
  TAX_ID_DESCRIPTION,
} from './subscriber-fields';
import { ApiMetadata } from '../../common/swagger/api-types';
import { Optional, OptionalNullable } from '../../common/validation/optional';

/** PATCH: only the fields sent change; null clears an optional field; metadata merges (a null value deletes a key). */
@ApiSchema({
  description: 'The subscriber fields to change; absent ones stay as they are, null clears a nullable one.',
})
export class UpdateSubscriberDto {
  @ApiPropertyOptional({ example: 'Ada King' })
  @ValidateIf((_o, value) => value !== undefined)
  @IsTrimmedText(200)
  full_name?: string;

  @ApiPropertyOptional({ example: 'ada@example.net', nullable: true, type: String })
  @OptionalNullable()
  @IsTrimmedText(254)
  @IsEmail({}, { message: 'email must be a valid email address' })
  email?: string | null;

  @ApiPropertyOptional({ example: '+14155550123', nullable: true, type: String })
  @OptionalNullable()
  @Trim()
  @IsString()
  @Matches(E164, { message: 'phone must be in E.164 format, e.g. +14155550123' })
  phone?: string | null;

  @ApiPropertyOptional({
    example: 'bp_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    nullable: true,
    type: String,
    description: 'A billing profile of this tenant to bill under; null detaches the profile.',
  })
  @OptionalNullable()
  @IsTrimmedText(64)
  billing_profile_id?: string | null;

  @ApiPropertyOptional({ type: AddressDto, nullable: true })
  @OptionalNullable()
  @IsObject({ message: 'address must be an object' })
  @ValidateNested()
  @Type(() => AddressDto)
  address?: AddressDto | null;

  @ApiMetadata({
    example: { plan: 'fiber-1000', referral: null },
    required: false,
    nullable: true,
    description: 'Merges into the stored metadata; a null value deletes its key.',
  })
  @OptionalNullable()
  @IsMetadata()
  metadata?: Record<string, string | number | boolean | null> | null;

  @ApiPropertyOptional({
    example: true,
    description: `${TAX_EXEMPT_DESCRIPTION} false clears tax_exempt_reason.`,
  })
  @Optional()
  @IsBoolean()
  tax_exempt?: boolean;

  @ApiPropertyOptional({
    example: 'Registered charity, certificate 2026-0117',
    maxLength: 500,
    nullable: true,
    type: String,
    description: TAX_EXEMPT_REASON_DESCRIPTION,
  })
  @OptionalNullable()
  @IsTrimmedText(500)
  tax_exempt_reason?: string | null;

  @ApiPropertyOptional({
    example: 'NL123456789B01',
    maxLength: 64,
    nullable: true,
    type: String,
    description: `${TAX_ID_DESCRIPTION} null clears it.`,
  })
  @OptionalNullable()
  @IsTrimmedText(64)
  tax_id?: string | null;
}
