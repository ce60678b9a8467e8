import { ApiProperty, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { Allow, IsIn, IsInt, Max, Min, registerDecorator } from 'class-validator';
import { MAX_AMOUNT } from '../../../common/money';
import { ApiInteger, ApiMoney } from '../../../common/swagger/api-types';
import { Optional } from '../../../common/validation/optional';
import { BillingProfile, LATE_FEE_TYPES, LateFeeType } from '../billing-profile.entity';

/** A late fee is charged at most this many days after the due date. */
export const MAX_LATE_FEE_AFTER_DAYS = 365;

/** "5", "5.5", "5.00", "100": up to three digits and two decimals. */
const PERCENTAGE_PATTERN = /^\d{1,3}(\.\d{1,2})?$/;

/** Whether `value` is a percentage a late fee may have: a decimal string above 0 and at most 100, two decimals at most. */
export function isLateFeePercentage(value: unknown): value is string {
  return (
    typeof value === 'string' && PERCENTAGE_PATTERN.test(value) && Number(value) > 0 && Number(value) <= 100
  );
}

/** "5" → "5.00": the form the database keeps and the API answers. */
export function canonicalPercentage(value: string): string {
  const [whole, decimals = ''] = value.split('.');
  return `${Number(whole)}.${decimals.padEnd(2, '0')}`;
}

function IsLateFeePercentage(): PropertyDecorator {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isLateFeePercentage',
      target: object.constructor,
      propertyName: String(propertyName),
      options: {
        message: `${String(propertyName)} must be a decimal string above 0 and at most 100, with at most two decimals (e.g. "5.00")`,
      },
      validator: { validate: isLateFeePercentage },
    });
}

/** max_amount, when both caps are given, is at least min_amount. */
function IsAtLeastMinAmount(): PropertyDecorator {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isAtLeastMinAmount',
      target: object.constructor,
      propertyName: String(propertyName),
      options: { message: `${String(propertyName)} must be at least min_amount` },
      validator: {
        validate: (value: unknown, args) => {
          const min = (args?.object as { min_amount?: unknown }).min_amount;
          return typeof min !== 'number' || typeof value !== 'number' || value >= min;
        },
      },
    });
}

const AFTER_DAYS = {
  minimum: 0,
  maximum: MAX_LATE_FEE_AFTER_DAYS,
  default: 0,
  required: false,
  example: 5,
  description:
    'The fee is charged once today (UTC) is past due_date + after_days and the invoice is still owed; 0 (default): from the day after the due date.',
};

@ApiSchema({ description: 'A late fee of a fixed amount, charged once per overdue invoice.' })
export class FixedLateFeeFormDto {
  @ApiProperty({
    enum: [LateFeeType.Fixed],
    example: LateFeeType.Fixed,
    description: 'fixed: the same amount on every overdue invoice.',
  })
  @IsIn([LateFeeType.Fixed], { message: 'type must be fixed' })
  type: LateFeeType.Fixed;

  @ApiMoney({ example: 500, minimum: 1, description: "The fee, in minor units of the profile's currency." })
  @IsInt()
  @Min(1)
  @Max(MAX_AMOUNT)
  amount: number;

  @ApiInteger(AFTER_DAYS)
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_LATE_FEE_AFTER_DAYS)
  after_days?: number;
}

@ApiSchema({
  description:
    'A late fee that is a percentage of the overdue amount (rounded half up to the minor unit), optionally held between a floor and a ceiling, charged once per overdue invoice.',
})
export class PercentageLateFeeFormDto {
  @ApiProperty({
    enum: [LateFeeType.Percentage],
    example: LateFeeType.Percentage,
    description: 'percentage: a share of what is overdue on the invoice.',
  })
  @IsIn([LateFeeType.Percentage], { message: 'type must be percentage' })
  type: LateFeeType.Percentage;

  @ApiProperty({
    example: '5.00',
    pattern: PERCENTAGE_PATTERN.source,
    maxLength: 6,
    description:
      'Percent of the overdue amount, a decimal string above 0 and at most 100 with at most two decimals ("5", "5.5", "5.00"); answered with two decimals.',
  })
  @IsLateFeePercentage()
  percentage: string;

  @ApiMoney({
    example: 200,
    minimum: 1,
    required: false,
    description: 'The smallest fee charged, in minor units; absent: no floor.',
  })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_AMOUNT)
  min_amount?: number;

  @ApiMoney({
    example: 5000,
    minimum: 1,
    required: false,
    description: 'The largest fee charged, in minor units (at least min_amount); absent: no ceiling.',
  })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(MAX_AMOUNT)
  @IsAtLeastMinAmount()
  max_amount?: number;

  @ApiInteger(AFTER_DAYS)
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_LATE_FEE_AFTER_DAYS)
  after_days?: number;
}

/**
 * What a late_fee whose `type` is neither form's becomes: only `type` is checked (the error names it), the other
 * fields are let through rather than each reported unknown. Never in the document.
 */
class UnknownLateFeeForm {
  @IsIn(LATE_FEE_TYPES, { message: `type must be one of ${LATE_FEE_TYPES.join(', ')}` })
  type: string;

  @Allow() amount?: unknown;
  @Allow() percentage?: unknown;
  @Allow() min_amount?: unknown;
  @Allow() max_amount?: unknown;
  @Allow() after_days?: unknown;
}

export type LateFeeForm = FixedLateFeeFormDto | PercentageLateFeeFormDto;

/** The late_fee property of a create or PATCH, in the document: one of the two forms (the caller adds null). */
export const LATE_FEE_FORM_SCHEMA = {
  oneOf: [{ $ref: getSchemaPath(FixedLateFeeFormDto) }, { $ref: getSchemaPath(PercentageLateFeeFormDto) }],
};

/** What an array sent as late_fee is read as: a value that is not an object, so @IsObject refuses it at `late_fee`. */
const AN_ARRAY = 'an array';

/**
 * Reads a late_fee as the form its `type` names (an unknown type: UnknownLateFeeForm, which refuses it). The form is
 * chosen here from the value rather than by class-transformer's `discriminator` option, which reads `type` of every
 * element of an array and threw on `[null]` (a 500). An array is read as a non-object, so the answer is "late_fee must
 * be an object" at `late_fee` rather than @ValidateNested's findings in its elements (`late_fee.0` missing for null).
 */
export function LateFeeFormType(): PropertyDecorator {
  const readArray = Transform(({ value }: { value: unknown }) => (Array.isArray(value) ? AN_ARRAY : value));
  const readForm = Type((options) => {
    const value: unknown = options?.object && options.property ? options.object[options.property] : undefined;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return UnknownLateFeeForm;
    }
    switch ((value as { type?: unknown }).type) {
      case LateFeeType.Fixed:
        return FixedLateFeeFormDto;
      case LateFeeType.Percentage:
        return PercentageLateFeeFormDto;
      default:
        return UnknownLateFeeForm;
    }
  });
  return (target: object, propertyKey: string | symbol) => {
    readArray(target, propertyKey);
    readForm(target, propertyKey);
  };
}

@ApiSchema({ description: 'A fixed late fee: the same amount on every overdue invoice.' })
export class FixedLateFeeDto {
  @ApiProperty({
    enum: [LateFeeType.Fixed],
    example: LateFeeType.Fixed,
    description: 'fixed: the same amount on every overdue invoice.',
  })
  type: LateFeeType.Fixed;
  @ApiMoney({ example: 500, minimum: 1, description: "The fee, in minor units of the profile's currency." })
  amount: number;
  @ApiInteger({ ...AFTER_DAYS, required: true, default: undefined })
  after_days: number;
}

@ApiSchema({
  description: 'A percentage late fee: a share of the overdue amount, rounded half up, within optional caps.',
})
export class PercentageLateFeeDto {
  @ApiProperty({
    enum: [LateFeeType.Percentage],
    example: LateFeeType.Percentage,
    description: 'percentage: a share of what is overdue on the invoice.',
  })
  type: LateFeeType.Percentage;
  @ApiProperty({
    example: '5.00',
    pattern: '^\\d{1,3}\\.\\d{2}$',
    description: 'Percent of the overdue amount, two decimals.',
  })
  percentage: string;
  @ApiMoney({
    example: 200,
    minimum: 1,
    nullable: true,
    description: 'The smallest fee charged, in minor units; null: no floor.',
  })
  min_amount: number | null;
  @ApiMoney({
    example: 5000,
    minimum: 1,
    nullable: true,
    description: 'The largest fee charged, in minor units; null: no ceiling.',
  })
  max_amount: number | null;
  @ApiInteger({ ...AFTER_DAYS, required: true, default: undefined })
  after_days: number;
}

export type LateFee = FixedLateFeeDto | PercentageLateFeeDto;

export const LATE_FEE_SCHEMA = {
  oneOf: [{ $ref: getSchemaPath(FixedLateFeeDto) }, { $ref: getSchemaPath(PercentageLateFeeDto) }],
};

/** The profile's late fee as the API shows it; null: none. */
export function lateFeeOf(profile: BillingProfile): LateFee | null {
  switch (profile.lateFeeType) {
    case LateFeeType.Fixed:
      return {
        type: LateFeeType.Fixed,
        amount: profile.lateFeeAmount!,
        after_days: profile.lateFeeAfterDays,
      };
    case LateFeeType.Percentage:
      return {
        type: LateFeeType.Percentage,
        percentage: profile.lateFeePercentage!,
        min_amount: profile.lateFeeMinAmount,
        max_amount: profile.lateFeeMaxAmount,
        after_days: profile.lateFeeAfterDays,
      };
    case null:
      return null;
  }
}

/** The profile columns a late_fee form (or null: none) sets; every one of them, so a PATCH replaces the whole fee. */
export function lateFeeColumns(
  form: LateFeeForm | null,
): Pick<
  BillingProfile,
  | 'lateFeeType'
  | 'lateFeeAmount'
  | 'lateFeePercentage'
  | 'lateFeeMinAmount'
  | 'lateFeeMaxAmount'
  | 'lateFeeAfterDays'
> {
  return {
    lateFeeType: form?.type ?? null,
    lateFeeAmount: form?.type === LateFeeType.Fixed ? form.amount : null,
    lateFeePercentage: form?.type === LateFeeType.Percentage ? canonicalPercentage(form.percentage) : null,
    lateFeeMinAmount: form?.type === LateFeeType.Percentage ? (form.min_amount ?? null) : null,
    lateFeeMaxAmount: form?.type === LateFeeType.Percentage ? (form.max_amount ?? null) : null,
    lateFeeAfterDays: form?.after_days ?? 0,
  };
}
