import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsObject, Max, Min, ValidateIf, ValidateNested } from 'class-validator';
import { ApiInteger } from '../../common/swagger/api-types';
import { TicketPriority } from '../ticket-status';

export const MAX_DUE_HOURS = 8760;

/** Hours from a ticket's creation to its due time, per priority. */
export type DueHours = Record<TicketPriority, number>;

export const DEFAULT_DUE_HOURS: Readonly<DueHours> = { urgent: 4, high: 24, normal: 72, low: 168 };

const present = (_object: object, value: unknown) => value !== undefined;

const hours = (priority: TicketPriority) =>
  ApiInteger({
    required: false,
    minimum: 1,
    maximum: MAX_DUE_HOURS,
    example: DEFAULT_DUE_HOURS[priority],
    description: `Hours to due_at for ${priority} tickets (default ${DEFAULT_DUE_HOURS[priority]}).`,
  });

/** Hours per priority; on PATCH, the priorities left out keep their value. */
@ApiSchema({ description: 'Hours from opening to due, per ticket priority.' })
export class DueHoursDto {
  @hours(TicketPriority.Urgent)
  @ValidateIf(present)
  @IsInt()
  @Min(1)
  @Max(MAX_DUE_HOURS)
  urgent?: number;

  @hours(TicketPriority.High)
  @ValidateIf(present)
  @IsInt()
  @Min(1)
  @Max(MAX_DUE_HOURS)
  high?: number;

  @hours(TicketPriority.Normal)
  @ValidateIf(present)
  @IsInt()
  @Min(1)
  @Max(MAX_DUE_HOURS)
  normal?: number;

  @hours(TicketPriority.Low)
  @ValidateIf(present)
  @IsInt()
  @Min(1)
  @Max(MAX_DUE_HOURS)
  low?: number;
}

@ApiSchema({ description: 'The SLA hours to change; priorities left out keep theirs.' })
export class UpdateTicketSettingsDto {
  @ApiPropertyOptional({ type: DueHoursDto, example: { high: 12, urgent: 2 } })
  @ValidateIf(present)
  @IsObject({ message: 'due_hours must be an object' })
  @ValidateNested()
  @Type(() => DueHoursDto)
  due_hours?: DueHoursDto;
}

@ApiSchema({ description: 'Hours from opening to due, per ticket priority, all of them present.' })
export class DueHoursAnswerDto {
  @ApiInteger({ example: 4, description: 'Hours from creation to due_at for urgent tickets.' })
  urgent: number;

  @ApiInteger({ example: 24, description: 'Hours from creation to due_at for high tickets.' })
  high: number;

  @ApiInteger({ example: 72, description: 'Hours from creation to due_at for normal tickets.' })
  normal: number;

  @ApiInteger({ example: 168, description: 'Hours from creation to due_at for low tickets.' })
  low: number;
}

@ApiSchema({ description: "The tenant's support SLA." })
export class TicketSettingsDto {
  @ApiProperty({ type: DueHoursAnswerDto })
  due_hours: DueHours;

  @ApiProperty({ nullable: true, type: String, description: 'null while the defaults apply.' })
  updated_at: string | null;
}
