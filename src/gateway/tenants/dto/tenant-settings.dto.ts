import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsEmail, IsObject, IsUrl, Matches, ValidateNested } from 'class-validator';
import {
  DEFAULT_NUMBER_FORMATS,
  MAX_NUMBER_FORMAT_LENGTH,
  MAX_SEQUENCE_WIDTH,
} from '../../../common/numbering-format';
import { Optional, OptionalNullable } from '../../../common/validation/optional';
import {
  MailSettingsDto,
  MailSettingsUpdateDto,
  NotificationSwitchesDto,
  NotificationSwitchesUpdateDto,
} from './tenant-mail-settings.dto';
import {
  IsCountryCode,
  IsLine,
  IsLocale,
  IsMultiLine,
  IsNumberFormat,
  IsTimeZone,
  MULTI_LINE,
  ONE_LINE,
  SETTINGS_LIMITS as MAX,
} from './tenant-settings-fields';

/** A phone number as it is printed. */
const PHONE = /^[+0-9(][0-9 ()./-]*$/;

export const DEFAULT_LOCALE = 'en-US';
export const DEFAULT_TIME_ZONE = 'UTC';

const FORMAT_DESCRIPTION =
  `Literal text and the tokens {YYYY}, {YY}, {MM} (of the issue date) and exactly one {seq} or {seq:N} (the ` +
  `sequence, zero-padded to N digits, 1 ≤ N ≤ ${MAX_SEQUENCE_WIDTH}; a longer number is written whole); at most ` +
  `${MAX_NUMBER_FORMAT_LENGTH} printable characters, no other braces. A series restarting each year needs {YYYY} or ` +
  `{YY}. A new format applies to numbers issued afterwards; the sequence goes on.`;
const RESTART_DESCRIPTION =
  'true: the sequence starts at 1 again each calendar year of the issue date (the format must hold {YYYY} or {YY}); ' +
  'false (default): it never restarts.';
const nullableText = (example: string, maxLength: number, description?: string) =>
  ApiPropertyOptional({ example, maxLength, nullable: true, type: String, description });

@ApiSchema({
  description: "The issuer's postal address on its documents; each part optional, null clears it.",
})
export class SettingsAddressDto {
  @nullableText('Rua Augusta 100', MAX.addressLine)
  @OptionalNullable()
  @IsLine(MAX.addressLine)
  line1?: string | null;

  @nullableText('3rd floor', MAX.addressLine)
  @OptionalNullable()
  @IsLine(MAX.addressLine)
  line2?: string | null;

  @nullableText('Lisboa', MAX.city)
  @OptionalNullable()
  @IsLine(MAX.city)
  city?: string | null;

  @nullableText('1100-053', MAX.postalCode)
  @OptionalNullable()
  @IsLine(MAX.postalCode)
  postal_code?: string | null;

  @nullableText('Lisboa', MAX.region, 'State, province or region.')
  @OptionalNullable()
  @IsLine(MAX.region)
  region?: string | null;

  @ApiPropertyOptional({
    example: 'PT',
    nullable: true,
    type: String,
    pattern: '^[A-Z]{2}$',
    description: 'ISO 3166-1 alpha-2, upper case.',
  })
  @OptionalNullable()
  @IsCountryCode()
  country?: string | null;
}

@ApiSchema({ description: 'How the issuer is reached, as printed on its documents; null clears a part.' })
export class SettingsContactDto {
  @nullableText('billing@acme-fiber.example', MAX.email)
  @OptionalNullable()
  @IsLine(MAX.email)
  @IsEmail({}, { message: 'email must be a valid email address' })
  email?: string | null;

  @nullableText(
    '+351 21 000 0000',
    MAX.phone,
    'Written as it should be printed: digits, spaces and + ( ) . / -.',
  )
  @OptionalNullable()
  @IsLine(MAX.phone)
  @Matches(PHONE, {
    message: 'phone must be a phone number: digits, spaces and + ( ) . / -',
  })
  phone?: string | null;

  @nullableText('https://acme-fiber.example', MAX.website, 'An http(s) URL.')
  @OptionalNullable()
  @IsLine(MAX.website)
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true },
    { message: 'website must be an http(s) URL' },
  )
  website?: string | null;
}

@ApiSchema({ description: 'A numbering series to change; what is left out stays.' })
export class SeriesNumberingUpdateDto {
  @ApiPropertyOptional({
    example: 'INV-{YYYY}-{seq:6}',
    maxLength: MAX_NUMBER_FORMAT_LENGTH,
    description: FORMAT_DESCRIPTION,
  })
  @Optional()
  @IsNumberFormat()
  format?: string;

  @ApiPropertyOptional({ example: true, description: RESTART_DESCRIPTION })
  @Optional()
  @IsBoolean()
  restart_yearly?: boolean;
}

@ApiSchema({ description: 'The numbering series to change; a series left out stays.' })
export class NumberingUpdateDto {
  @ApiPropertyOptional({ type: SeriesNumberingUpdateDto })
  @Optional()
  @IsObject({ message: 'invoice must be an object' })
  @ValidateNested()
  @Type(() => SeriesNumberingUpdateDto)
  invoice?: SeriesNumberingUpdateDto;

  @ApiPropertyOptional({ type: SeriesNumberingUpdateDto })
  @Optional()
  @IsObject({ message: 'credit_note must be an object' })
  @ValidateNested()
  @Type(() => SeriesNumberingUpdateDto)
  credit_note?: SeriesNumberingUpdateDto;
}

/**
 * PATCH /tenant/settings: the fields sent change, the others stay; null clears an optional one (address and contact
 * merge part by part, and null for the whole object clears every part). locale, time_zone and the formats cannot be
 * null: send the default value back instead.
 */
@ApiSchema({ description: "The tenant's document settings to change; absent fields stay as they are." })
export class UpdateTenantSettingsDto {
  @nullableText('Acme Fiber, Lda.', MAX.legalName, 'The legal name documents are issued under.')
  @OptionalNullable()
  @IsLine(MAX.legalName)
  legal_name?: string | null;

  @ApiPropertyOptional({
    type: SettingsAddressDto,
    nullable: true,
    description: 'Merged part by part; null clears it all.',
  })
  @OptionalNullable()
  @IsObject({ message: 'address must be an object' })
  @ValidateNested()
  @Type(() => SettingsAddressDto)
  address?: SettingsAddressDto | null;

  @nullableText('PT509999999', MAX.taxId, 'VAT or tax identification number.')
  @OptionalNullable()
  @IsLine(MAX.taxId)
  tax_id?: string | null;

  @nullableText('CRC Lisboa 12345', MAX.registrationNumber, 'Company registration number.')
  @OptionalNullable()
  @IsLine(MAX.registrationNumber)
  registration_number?: string | null;

  @ApiPropertyOptional({
    type: SettingsContactDto,
    nullable: true,
    description: 'Merged part by part; null clears it all.',
  })
  @OptionalNullable()
  @IsObject({ message: 'contact must be an object' })
  @ValidateNested()
  @Type(() => SettingsContactDto)
  contact?: SettingsContactDto | null;

  @nullableText(
    'Bank transfer to IBAN PT50 0002 0123 1234 5678 9015 4\nQuote the invoice number.',
    MAX.paymentInstructions,
    'Multi-line: how to pay (bank account, IBAN, the reference to quote), printed on invoices.',
  )
  @OptionalNullable()
  @IsMultiLine(MAX.paymentInstructions)
  payment_instructions?: string | null;

  @nullableText(
    'Thank you for your business.',
    MAX.invoiceFooter,
    'Multi-line text at the foot of every invoice.',
  )
  @OptionalNullable()
  @IsMultiLine(MAX.invoiceFooter)
  invoice_footer?: string | null;

  @ApiPropertyOptional({
    example: 'pt-PT',
    maxLength: MAX.locale,
    description: `BCP 47 language tag documents are written in (amounts, dates); stored canonical (en-us → en-US). Default ${DEFAULT_LOCALE}.`,
  })
  @Optional()
  @IsLocale()
  locale?: string;

  @ApiPropertyOptional({
    example: 'Europe/Lisbon',
    maxLength: MAX.timeZone,
    description: `IANA time zone the dates of documents are given in. Default ${DEFAULT_TIME_ZONE}.`,
  })
  @Optional()
  @IsTimeZone()
  time_zone?: string;

  @ApiPropertyOptional({ type: NumberingUpdateDto })
  @Optional()
  @IsObject({ message: 'numbering must be an object' })
  @ValidateNested()
  @Type(() => NumberingUpdateDto)
  numbering?: NumberingUpdateDto;

  @ApiPropertyOptional({
    type: MailSettingsUpdateDto,
    nullable: true,
    description:
      "The tenant's own SMTP server for its notifications (issue 31; sending is being built): merged field by field; a first one needs host, port, tls and from; null clears it all and the instance's server (SMTP_URL, MAIL_FROM) is used.",
  })
  @OptionalNullable()
  @IsObject({ message: 'mail must be an object' })
  @ValidateNested()
  @Type(() => MailSettingsUpdateDto)
  mail?: MailSettingsUpdateDto | null;

  @ApiPropertyOptional({ type: NotificationSwitchesUpdateDto })
  @Optional()
  @IsObject({ message: 'notifications must be an object' })
  @ValidateNested()
  @Type(() => NotificationSwitchesUpdateDto)
  notifications?: NotificationSwitchesUpdateDto;
}

/**
 * An answer's text field, with its own bounds: a response property without them would take those of a request
 * property of the same name elsewhere (string-formats.ts), such as the subscribers' E.164 `phone`.
 */
const answerText = (example: string, maxLength: number, extra: { pattern?: string; format?: string } = {}) =>
  ApiProperty({ example, maxLength, nullable: true, type: String, ...extra });

/** The answer's ONE_LINE pattern, as the request declares it. */
const LINE_PATTERN = ONE_LINE.source;
/** The answer's MULTI_LINE pattern. */
const MULTI_LINE_PATTERN = MULTI_LINE.source;

@ApiSchema({ description: "The issuer's postal address; a part never set is null." })
export class SettingsAddressAnswerDto {
  @answerText('Rua Augusta 100', MAX.addressLine, { pattern: LINE_PATTERN }) line1: string | null;
  @answerText('3rd floor', MAX.addressLine, { pattern: LINE_PATTERN }) line2: string | null;
  @answerText('Lisboa', MAX.city, { pattern: LINE_PATTERN }) city: string | null;
  @answerText('1100-053', MAX.postalCode, { pattern: LINE_PATTERN }) postal_code: string | null;
  @answerText('Lisboa', MAX.region, { pattern: LINE_PATTERN }) region: string | null;
  @ApiProperty({
    example: 'PT',
    nullable: true,
    type: String,
    maxLength: 2,
    pattern: '^[A-Z]{2}$',
    description: 'ISO 3166-1 alpha-2.',
  })
  country: string | null;
}

@ApiSchema({ description: 'How the issuer is reached; a part never set is null.' })
export class SettingsContactAnswerDto {
  @answerText('billing@acme-fiber.example', MAX.email, { format: 'email' }) email: string | null;
  @answerText('+351 21 000 0000', MAX.phone, { pattern: PHONE.source }) phone: string | null;
  @answerText('https://acme-fiber.example', MAX.website) website: string | null;
}

@ApiSchema({ description: 'A numbering series: its format and whether it restarts each year.' })
export class SeriesNumberingDto {
  @ApiProperty({
    example: 'INV-{YYYY}-{seq:6}',
    maxLength: MAX_NUMBER_FORMAT_LENGTH,
    description: FORMAT_DESCRIPTION,
  })
  format: string;
  @ApiProperty({ example: false, description: RESTART_DESCRIPTION }) restart_yearly: boolean;
}

@ApiSchema({
  description: "The tenant's numbering series, each numbered on its own (gapless, docs/billing.md).",
})
export class NumberingDto {
  @ApiProperty({
    type: SeriesNumberingDto,
    example: { format: DEFAULT_NUMBER_FORMATS.invoice, restart_yearly: false },
    description: `Invoices. Default ${DEFAULT_NUMBER_FORMATS.invoice}, never restarting.`,
  })
  invoice: SeriesNumberingDto;

  @ApiProperty({
    type: SeriesNumberingDto,
    example: { format: DEFAULT_NUMBER_FORMATS.credit_note, restart_yearly: false },
    description: `Credit notes. Default ${DEFAULT_NUMBER_FORMATS.credit_note}, never restarting.`,
  })
  credit_note: SeriesNumberingDto;
}

/**
 * The tenant as the issuer of its invoices and credit notes. Read with `billing:read` and changed with `billing:write`:
 * they are billing's documents (what an invoice says about who issued it, how to pay and how it is numbered), so
 * whoever may issue them may say so, without the tenant-wide `admin`.
 */
@ApiSchema({
  description:
    'The tenant as the issuer of its documents: legal details, address, contact, payment instructions, invoice footer, the locale and time zone documents are written in, the numbering series, the mail server notifications go out through and the kinds sent. Read with billing:read, changed with billing:write (billing documents carry them).',
})
export class TenantSettingsDto {
  @answerText('Acme Fiber, Lda.', MAX.legalName, { pattern: LINE_PATTERN }) legal_name: string | null;
  @ApiProperty({ type: SettingsAddressAnswerDto }) address: SettingsAddressAnswerDto;
  @answerText('PT509999999', MAX.taxId, { pattern: LINE_PATTERN }) tax_id: string | null;
  @answerText('CRC Lisboa 12345', MAX.registrationNumber, { pattern: LINE_PATTERN })
  registration_number: string | null;
  @ApiProperty({ type: SettingsContactAnswerDto }) contact: SettingsContactAnswerDto;
  @answerText(
    'Bank transfer to IBAN PT50 0002 0123 1234 5678 9015 4\nQuote the invoice number.',
    MAX.paymentInstructions,
    { pattern: MULTI_LINE_PATTERN },
  )
  payment_instructions: string | null;
  @answerText('Thank you for your business.', MAX.invoiceFooter, { pattern: MULTI_LINE_PATTERN })
  invoice_footer: string | null;
  @ApiProperty({ example: 'pt-PT', maxLength: MAX.locale, description: `BCP 47. Default ${DEFAULT_LOCALE}.` })
  locale: string;
  @ApiProperty({
    example: 'Europe/Lisbon',
    maxLength: MAX.timeZone,
    description: `IANA. Default ${DEFAULT_TIME_ZONE}.`,
  })
  time_zone: string;
  @ApiProperty({ type: NumberingDto }) numbering: NumberingDto;
  @ApiProperty({
    type: MailSettingsDto,
    nullable: true,
    description: "The tenant's own mail server; null while the instance's (SMTP_URL, MAIL_FROM) is used.",
  })
  mail: MailSettingsDto | null;
  @ApiProperty({ type: NotificationSwitchesDto }) notifications: NotificationSwitchesDto;
  @ApiProperty({
    example: '2026-11-21T10:00:00.000Z',
    nullable: true,
    type: String,
    description: 'When a PATCH last changed them; null while the defaults apply.',
  })
  updated_at: string | null;
}
