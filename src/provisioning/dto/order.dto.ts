import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination';
import { ApiInteger } from '../../common/swagger/api-types';
import { IsTrimmedText, Trim } from '../../common/validation/text';
import { SessionOutcome, type ProvisioningOrder } from '../provisioning.entity';
import {
  ORDER_ACTIONS,
  ORDER_STATUSES,
  OrderAction,
  OrderStatus,
  SERVICE_ACTIONS,
  type ServiceAction,
} from '../service-status';
import { ServiceDto } from './service.dto';
import { Optional } from '../../common/validation/optional';
import { OneOrMoreOf } from '../../common/validation/comma-list';

@ApiSchema({
  description:
    'An action on a service (suspend, resume, change plan, terminate), carried out by a provisioning order.',
})
export class ServiceActionDto {
  @ApiProperty({
    enum: SERVICE_ACTIONS,
    example: OrderAction.Suspend,
    description: 'What the order does to the service; a move its status does not allow is 409.',
  })
  @IsIn(SERVICE_ACTIONS, { message: `action must be one of ${SERVICE_ACTIONS.join(', ')}` })
  action: ServiceAction;

  @ApiPropertyOptional({
    example: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    type: String,
    description: 'The new plan: change_plan only.',
  })
  @Optional()
  @IsTrimmedText(64)
  plan_id?: string | null;

  @ApiPropertyOptional({
    example: 'non_payment',
    maxLength: 500,
    description: 'Why, kept on the order and its events.',
  })
  @Optional()
  @IsTrimmedText(500)
  reason?: string;
}

export class ListOrdersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ example: 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(64)
  service_id?: string;

  @ApiPropertyOptional({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(64)
  subscriber_id?: string;

  @OneOrMoreOf(ORDER_STATUSES, { description: 'Only orders in one of these states.' })
  status?: OrderStatus[];

  @OneOrMoreOf(ORDER_ACTIONS, { description: 'Only orders of one of these actions.' })
  action?: OrderAction[];
}

@ApiSchema({
  description: 'A provisioning order: a change to a service carried to the network by the worker.',
})
export class OrderDto {
  @ApiProperty({ example: 'ord_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The service it changes.' })
  service_id: string;

  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: "The service's subscriber." })
  subscriber_id: string;

  @ApiProperty({
    enum: ORDER_ACTIONS,
    example: OrderAction.Activate,
    description: 'What it does: activate, suspend, resume, change_plan, terminate, or modify (a PATCH).',
  })
  action: OrderAction;

  @ApiProperty({
    enum: ORDER_STATUSES,
    example: OrderStatus.Acknowledged,
    description:
      'acknowledged → in_progress (a worker took it) → completed | failed; or acknowledged → cancelled.',
  })
  status: OrderStatus;

  @ApiProperty({
    example: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The plan once the order completes.',
  })
  plan_id: string;

  @ApiProperty({
    type: [String],
    nullable: true,
    example: null,
    description: 'modify: what the network must see.',
  })
  changes: string[] | null;

  @ApiProperty({ nullable: true, type: String, description: 'Why, as sent with the action; null: none.' })
  reason: string | null;

  @ApiInteger({ example: 0, description: 'How often the network driver was tried.' })
  attempts: number;

  @ApiProperty({ nullable: true, type: String, description: "The driver's last error." })
  last_error: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When the order completed and its service changed; null otherwise.',
  })
  completed_at: string | null;

  @ApiProperty({
    // null listed too: a nullable enum's null must be one of its values for validators of examples.
    enum: [...Object.values(SessionOutcome), null],
    nullable: true,
    example: null,
    description:
      "suspend and terminate, once completed: what the NAS of the service's open sessions answered the RFC 5176 " +
      "Disconnect-Request (`acked`, `nak`, `timeout` after the retries, `unknown_nas` when the session's NAS is " +
      'not registered, `no_session` when it was offline); the worst of its sessions. Null for other actions.',
  })
  disconnect: SessionOutcome | null;

  @ApiProperty({
    enum: [...Object.values(SessionOutcome), null],
    nullable: true,
    example: null,
    description: 'change_plan, once completed: the same for the CoA-Request carrying the new rate.',
  })
  coa: SessionOutcome | null;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  updated_at: string;

  static from(order: ProvisioningOrder): OrderDto {
    return {
      id: order.id,
      service_id: order.serviceId,
      subscriber_id: order.subscriberId,
      action: order.action,
      status: order.status,
      plan_id: order.planId,
      changes: order.changes,
      reason: order.reason,
      attempts: order.attempts,
      last_error: order.lastError,
      completed_at: order.completedAt ? order.completedAt.toISOString() : null,
      disconnect: order.disconnect,
      coa: order.coa,
      created_at: order.createdAt.toISOString(),
      updated_at: order.updatedAt.toISOString(),
    };
  }
}

/** POST /subscribers/{id}/services: the new service and the order that activates it. */
@ApiSchema({ description: 'A service just ordered, with the order that will activate it.' })
export class ServiceWithOrderDto {
  @ApiProperty({ type: ServiceDto })
  service: ServiceDto;

  @ApiProperty({ type: OrderDto })
  order: OrderDto;
}
