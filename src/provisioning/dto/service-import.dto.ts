import { ApiProperty, ApiPropertyOptional, ApiSchema, OmitType } from '@nestjs/swagger';
import { IsTrimmedText } from '../../common/validation/text';
import { Optional } from '../../common/validation/optional';
import { CreateServiceDto } from './service.dto';

/**
 * A row of a `services` import (docs/imports.md): the body of POST /subscribers/{id}/services, checked by the same
 * rules, with the subscriber named by its external_id, the plan by its id or its name, and the service's own
 * external_id, which the import matches rows by.
 */
@ApiSchema({ description: 'A row of a services import: a service of a subscriber imported earlier.' })
export class ImportServiceDto extends OmitType(CreateServiceDto, ['plan_id'] as const) {
  @ApiPropertyOptional({
    example: 'splynx-svc-1042',
    description: 'Required: the service’s id in the system it comes from; a second import of it updates it.',
  })
  @Optional()
  @IsTrimmedText(200)
  external_id?: string;

  @ApiProperty({
    example: 'crm-000123',
    description: 'The external_id of the subscriber (imported earlier).',
  })
  @IsTrimmedText(200)
  subscriber_external_id: string;

  @ApiPropertyOptional({ example: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The plan, or plan_name.' })
  @Optional()
  @IsTrimmedText(64)
  plan_id?: string;

  @ApiPropertyOptional({
    example: 'Fiber 500',
    description: 'The plan by its name (unique per tenant), or plan_id.',
  })
  @Optional()
  @IsTrimmedText(100)
  plan_name?: string;
}
