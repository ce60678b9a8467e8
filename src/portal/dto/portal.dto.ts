import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsTrimmedText } from '../../common/validation/text';
import type { PortalInvite, PortalSession } from '../portal.entity';

@ApiSchema({ description: 'A one-time invite to the portal, without its code.' })
export class PortalInviteDto {
  @ApiProperty({ example: 'pin_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber it signs in.' })
  subscriber_id: string;

  @ApiProperty({ example: '2026-11-28T10:00:00.000Z', description: 'After it the code no longer signs in.' })
  expires_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  static from(invite: PortalInvite): PortalInviteDto {
    return {
      id: invite.id,
      subscriber_id: invite.subscriberId,
      expires_at: invite.expiresAt.toISOString(),
      created_at: invite.createdAt.toISOString(),
    };
  }
}

@ApiSchema({ description: 'A new portal invite, with its one-time code: in this answer only.' })
export class IssuedPortalInviteDto extends PortalInviteDto {
  @ApiProperty({
    example: 'ipi_x4Jx2Vb9mXq0M1QeQ0kq2Q6yM3nN7d0W',
    maxLength: 100,
    description:
      'The one-time code: POST /api/v1/portal/sessions with it signs the subscriber in, once, before expires_at. ' +
      'Shown once; only its hash is kept.',
  })
  code: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'https://portal.acme-fiber.example/?invite=ipi_x4Jx2Vb9mXq0M1QeQ0kq2Q6yM3nN7d0W',
    maxLength: 2200,
    description:
      'The link to hand the subscriber: PORTAL_URL (else <PUBLIC_BASE_URL>/portal/) with ?invite=<code>; null when neither is set.',
  })
  url: string | null;
}

@ApiSchema({ description: 'A sign-in to the portal.' })
export class CreatePortalSessionDto {
  @ApiProperty({
    example: 'ipi_x4Jx2Vb9mXq0M1QeQ0kq2Q6yM3nN7d0W',
    maxLength: 200,
    description: 'The code of a portal invite (POST /subscribers/{id}/portal-invites); it works once.',
  })
  @IsTrimmedText(200)
  invite_code: string;
}

@ApiSchema({ description: 'A portal session, without its token.' })
export class PortalSessionDto {
  @ApiProperty({ example: 'pss_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The one subscriber it acts for.' })
  subscriber_id: string;

  @ApiProperty({ enum: ['invite'], example: 'invite', description: 'How the subscriber signed in.' })
  method: string;

  @ApiProperty({ example: '2026-11-21T22:00:00.000Z', description: 'After it the token no longer works.' })
  expires_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  static from(
    session: Pick<PortalSession, 'id' | 'subscriberId' | 'method' | 'expiresAt' | 'createdAt'>,
  ): PortalSessionDto {
    return {
      id: session.id,
      subscriber_id: session.subscriberId,
      method: session.method,
      expires_at: session.expiresAt.toISOString(),
      created_at: session.createdAt.toISOString(),
    };
  }
}

@ApiSchema({ description: 'A new portal session, with its bearer token: in this answer only.' })
export class IssuedPortalSessionDto extends PortalSessionDto {
  @ApiProperty({
    example: 'ipt_3q2mX0v1Yb7kR9sTzW4eN8uJ5hC6dF1gA2sD3fG4hJ5',
    maxLength: 100,
    description:
      'The bearer token (Authorization: Bearer <token>) with scope `portal`, bound to subscriber_id. Shown once; ' +
      'only its hash is kept.',
  })
  token: string;

  @ApiProperty({ enum: ['portal'], example: 'portal', description: 'The one scope it holds.' })
  scope: string;
}

@ApiSchema({ description: 'What the portal shows of the tenant.' })
export class PortalTenantDto {
  @ApiProperty({ example: 'ten_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({
    example: 'Acme Fiber',
    description: 'Its legal name when the settings give one, else its name.',
  })
  name: string;

  @ApiProperty({ example: 'de-DE', description: 'The locale its documents are written in.' })
  locale: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'IBAN DE89 3704 0044 0532 0130 00, reference: your invoice number',
    description: 'How to pay (tenant settings payment_instructions).',
  })
  payment_instructions: string | null;
}

@ApiSchema({
  description: 'The signed-in portal session: its subscriber and what the portal shows of the tenant.',
})
export class PortalSessionInfoDto extends PortalSessionDto {
  @ApiProperty({ type: PortalTenantDto })
  tenant: PortalTenantDto;
}

@ApiSchema({ description: "What revoking a subscriber's portal sessions did." })
export class RevokedPortalSessionsDto {
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  subscriber_id: string;

  @ApiProperty({
    example: 2,
    type: 'integer',
    minimum: 0,
    description: 'How many live sessions were ended now.',
  })
  revoked: number;
}
