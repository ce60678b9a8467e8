import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsString, Matches, MaxLength, registerDecorator, ValidationOptions } from 'class-validator';
import { numberFormatProblem } from '../../../common/numbering-format';
import { IsNotBlank, Trim } from '../../../common/validation/text';

/** The longest value of each text field of the tenant settings. */
export const SETTINGS_LIMITS = {
  legalName: 200,
  addressLine: 200,
  city: 100,
  postalCode: 20,
  region: 100,
  taxId: 50,
  registrationNumber: 50,
  email: 254,
  phone: 40,
  website: 200,
  paymentInstructions: 2000,
  invoiceFooter: 1000,
  locale: 35,
  timeZone: 64,
} as const;

/**
 * No control character (Unicode Cc: U+0000–001F, U+007F–009F), line or paragraph separator (U+2028, U+2029): text
 * that stays on one line of a document. Written as ranges, not `\p{Cc}`, so the document's pattern reads the same
 * with or without a regular expression's unicode flag.
 */
// eslint-disable-next-line no-control-regex -- refusing control characters is its purpose
export const ONE_LINE = /^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/;
/** No control character but tab, line feed and carriage return. */
// eslint-disable-next-line no-control-regex -- as ONE_LINE
export const MULTI_LINE = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]*$/;

/** A one-line text field (a name, an identifier): trimmed, not blank, at most `max` characters. */
export function IsLine(max: number) {
  return applyDecorators(
    Trim(),
    IsString(),
    IsNotBlank(),
    MaxLength(max),
    Matches(ONE_LINE, { message: '$property must be one line, without control characters' }),
  );
}

/** Multi-line text, kept verbatim: not blank, at most `max` characters, no control characters but new lines and tabs. */
export function IsMultiLine(max: number) {
  return applyDecorators(
    IsString(),
    IsNotBlank(),
    MaxLength(max),
    Matches(MULTI_LINE, { message: '$property may hold no control characters but new lines and tabs' }),
  );
}

/**
 * ISO 3166-1 alpha-2: the 249 officially assigned codes, and XK (Kosovo: user-assigned, but the code the European
 * Commission, SWIFT and most tax authorities use for it).
 */
const COUNTRY_CODES = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO ' +
    'FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE ' +
    'JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO ' +
    'MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW ' +
    'PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM ' +
    'TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW XK'
  ).split(' '),
);

export function isCountryCode(value: unknown): boolean {
  return typeof value === 'string' && COUNTRY_CODES.has(value);
}

/** The canonical form of a BCP 47 tag (`en-us` → `en-US`), or the value as it was when it is none. */
export function canonicalLocale(value: unknown): unknown {
  if (typeof value !== 'string') {
    return value;
  }
  try {
    const tags = Intl.getCanonicalLocales(value);
    return tags.length === 1 ? tags[0] : value;
  } catch {
    return value;
  }
}

/** A canonical BCP 47 tag that the runtime can write dates and numbers in (not merely well-formed: `xx` is refused). */
export function isSupportedLocale(value: unknown): boolean {
  if (
    typeof value !== 'string' ||
    value.length > SETTINGS_LIMITS.locale ||
    canonicalLocale(value) !== value
  ) {
    return false;
  }
  try {
    return (
      Intl.DateTimeFormat.supportedLocalesOf([value]).length === 1 &&
      Intl.NumberFormat.supportedLocalesOf([value]).length === 1
    );
  } catch {
    return false; // not a well-formed tag (supportedLocalesOf throws RangeError)
  }
}

/** A name of the IANA time zone database, as the runtime resolves it (`europe/paris` → `Europe/Paris`), or the value. */
export function canonicalTimeZone(value: unknown): unknown {
  if (typeof value !== 'string' || !IANA_NAME.test(value)) {
    return value;
  }
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return value;
  }
}

/** Letters, digits, `_`, `-`, `+` in `/`-separated names; never an offset (`+01:00`), which is no IANA zone. */
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

export function isTimeZone(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > SETTINGS_LIMITS.timeZone || !IANA_NAME.test(value)) {
    return false;
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

function predicate(name: string, message: string, validate: (value: unknown) => boolean) {
  return (options?: ValidationOptions): PropertyDecorator =>
    (object: object, property: string | symbol) =>
      registerDecorator({
        name,
        target: object.constructor,
        propertyName: String(property),
        options: { message: `${String(property)} ${message}`, ...options },
        validator: { validate },
      });
}

export const IsCountryCode = predicate(
  'isCountryCode',
  'must be an ISO 3166-1 alpha-2 country code in upper case, e.g. PT',
  isCountryCode,
);

/** A BCP 47 locale, stored in its canonical form. */
export function IsLocale() {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => canonicalLocale(value)),
    IsString(),
    predicate(
      'isLocale',
      'must be a BCP 47 language tag this server can write documents in, e.g. en-US or pt-PT',
      isSupportedLocale,
    )(),
  );
}

/** An IANA time zone, stored as the runtime names it. */
export function IsTimeZone() {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => canonicalTimeZone(value)),
    IsString(),
    predicate('isTimeZone', 'must be an IANA time zone name, e.g. Europe/Lisbon or UTC', isTimeZone)(),
  );
}

/** A numbering series' format (src/common/numbering-format.ts); the yearly-restart check is the service's. */
export function IsNumberFormat() {
  return applyDecorators(IsString(), (object: object, property: string | symbol) =>
    registerDecorator({
      name: 'isNumberFormat',
      target: object.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) => numberFormatProblem(value) === null,
        defaultMessage: (args) => `${String(property)} ${numberFormatProblem(args?.value) ?? 'is invalid'}`,
      },
    }),
  );
}
