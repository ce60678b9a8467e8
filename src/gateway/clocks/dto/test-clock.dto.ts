import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsTimestamp } from '../../../common/validation/is-date-only';
import { IsTrimmedText } from '../../../common/validation/text';
import { TenantResponseDto } from '../../tenants/dto/tenant.dto';
import { TEST_CLOCK_STATUSES, TestClock, TestClockStatus } from '../test-clock.entity';

@ApiSchema({ description: 'A new test clock: its name and the instant its test tenant starts at.' })
export class CreateTestClockDto {
  @ApiProperty({ example: 'Dunning rehearsal', description: 'What the clock is for (1–200 characters).' })
  @IsTrimmedText(200)
  name: string;

  @ApiProperty({
    example: '2027-01-01T00:00:00.000Z',
    description:
      "The test tenant's time to begin with (RFC 3339); it stands still until an advance moves it.",
  })
  @IsTimestamp()
  frozen_time: string;
}

@ApiSchema({ description: 'Where to move a test clock: a later instant, at most two years on.' })
export class AdvanceTestClockDto {
  @ApiProperty({
    example: '2027-02-15T00:00:00.000Z',
    description: 'After the frozen_time (a clock never goes back) and at most 2 years (731 days) after it.',
  })
  @IsTimestamp()
  to: string;
}

@ApiSchema({
  description:
    'A test clock: the time of its test tenant, which every record of that tenant is dated by; moved only forward, by an advance that carries out everything due in between (docs/test-clocks.md).',
})
export class TestClockDto {
  @ApiProperty({ example: 'clk_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'Dunning rehearsal' })
  name: string;

  @ApiProperty({ example: '2027-01-01T00:00:00.000Z', description: "The test tenant's time now." })
  frozen_time: string;

  @ApiProperty({
    enum: TEST_CLOCK_STATUSES,
    example: TestClockStatus.Ready,
    description:
      'ready: it may advance; advancing: an advance is under way (frozen_time moves day by day); internal_failure: an advance stopped on an error (the log says which).',
  })
  status: TestClockStatus;

  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    example: null,
    description: 'Where the advance under way goes; null when the clock is not advancing.',
  })
  advance_to: string | null;

  @ApiProperty({
    example: 'ten_01JD3Z6W3R4T5Y6U7I8O9P0QAC',
    description: 'The test tenant the clock governs.',
  })
  tenant_id: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  updated_at: string;

  static from(clock: TestClock): TestClockDto {
    return {
      id: clock.id,
      name: clock.name,
      frozen_time: clock.frozenTime.toISOString(),
      status: clock.status,
      advance_to: clock.advanceTo?.toISOString() ?? null,
      tenant_id: clock.tenantId,
      created_at: clock.createdAt.toISOString(),
      updated_at: clock.updatedAt.toISOString(),
    };
  }
}

@ApiSchema({
  description:
    'A test clock just made, with its test tenant and an `admin` token of that tenant (the secret is in this answer only).',
})
export class CreatedTestClockDto extends TestClockDto {
  @ApiProperty({ type: TenantResponseDto })
  tenant: TenantResponseDto;

  @ApiProperty({
    example: 'isk_3fJ9kQ2mN8pR5tW7yZ1bC4dF6gH0jL2n',
    description: 'An `admin` token of the test tenant: shown once, never again.',
  })
  token: string;
}
