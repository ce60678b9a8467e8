import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { IsTrimmedText, Trim } from '../../../common/validation/text';
import { Tenant } from '../tenant.entity';

@ApiSchema({ description: 'A new tenant: its name and unique slug.' })
export class CreateTenantDto {
  @ApiProperty({
    example: 'acme-fiber',
    description: 'Lowercase letters, digits and dashes; 2–63 characters.',
  })
  @Trim()
  @IsString()
  @Matches(/^[a-z0-9][a-z0-9-]{1,62}$/, { message: 'slug must be 2–63 lowercase letters, digits or dashes' })
  slug: string;

  @ApiProperty({ example: 'Acme Fiber Ltd' })
  @IsTrimmedText(200)
  name: string;
}

@ApiSchema({
  description: "A tenant: one ISP served by this deployment, its data kept apart from every other's.",
})
export class TenantResponseDto {
  @ApiProperty({ example: 'ten_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'acme-fiber' })
  slug: string;

  @ApiProperty({ example: 'Acme Fiber Ltd' })
  name: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  static from(tenant: Tenant): TenantResponseDto {
    return {
      id: tenant.id,
      slug: tenant.slug,
      name: tenant.name,
      created_at: tenant.createdAt.toISOString(),
    };
  }
}
