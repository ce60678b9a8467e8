import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsEmail, IsIn, IsString, Matches, MaxLength } from 'class-validator';
import { Optional } from '../../common/validation/optional';
import { IsTrimmedText, Trim } from '../../common/validation/text';
import type { PortalInvite, PortalSession, PortalSignInCode } from '../portal.entity';

/** How an invite reaches the subscriber: handed back to the operator (link), or mailed by the notifications (email). */
export const INVITE_DELIVERIES = ['link', 'email'] as const;
export type InviteDelivery = (typeof INVITE_DELIVERIES)[number];

@ApiSchema({ description: 'How to deliver a portal invite.' })
export class CreatePortalInviteDto {
  @ApiPropertyOptional({
    enum: INVITE_DELIVERIES,
    default: 'link',
    description:
      'link (default): the code and link are in the answer, for your own channel. email: the subscriber is mailed ' +
      'the link and the code (notification kind portal_invite) and the answer holds neither.',
  })
  @Optional()
  @IsIn(INVITE_DELIVERIES, { message: 'delivery must be link or email' })
  delivery?: InviteDelivery;
}

@ApiSchema({ description: 'A one-time invite to the portal, without its code.' })
export class PortalInviteDto {
  @ApiProperty({ example: 'pin_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber it signs in.' })
  subscriber_id: string;

  @ApiProperty({
    enum: INVITE_DELIVERIES,
    example: 'link',
    description: 'link: handed to the operator; email: mailed to the subscriber.',
  })
  delivery: string;

  @ApiProperty({ example: '2026-11-28T10:00:00.000Z', description: 'After it the code no longer signs in.' })
  expires_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  static from(invite: PortalInvite): PortalInviteDto {
    return {
      id: invite.id,
      subscriber_id: invite.subscriberId,
      delivery: invite.delivery,
      expires_at: invite.expiresAt.toISOString(),
      created_at: invite.createdAt.toISOString(),
    };
  }
}

@ApiSchema({
  description:
    'A new portal invite. delivery link: with its one-time code and link, in this answer only. delivery email: ' +
    'without them (only the mail holds them).',
})
export class IssuedPortalInviteDto extends PortalInviteDto {
  @ApiPropertyOptional({
    example: 'ipi_x4Jx2Vb9mXq0M1QeQ0kq2Q6yM3nN7d0W',
    maxLength: 100,
    description:
      'delivery link only. The one-time code: POST /api/v1/portal/sessions with it signs the subscriber in, once, ' +
      'before expires_at. Shown once; only its hash is kept.',
  })
  code?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'https://portal.acme-fiber.example/?invite=ipi_x4Jx2Vb9mXq0M1QeQ0kq2Q6yM3nN7d0W',
    maxLength: 2200,
    description:
      'delivery link only. The link to hand the subscriber: PORTAL_URL (else <PUBLIC_BASE_URL>/portal/) with ' +
      '?invite=<code>; null when neither is set.',
  })
  url?: string | null;
}

const SLUG = /^[a-z0-9][a-z0-9-]{1,62}$/;

@ApiSchema({
  description:
    'A sign-in to the portal: either invite_code, or tenant, email and code (an emailed sign-in code).',
})
export class CreatePortalSessionDto {
  @ApiPropertyOptional({
    example: 'ipi_x4Jx2Vb9mXq0M1QeQ0kq2Q6yM3nN7d0W',
    maxLength: 200,
    description: 'The code of a portal invite (POST /subscribers/{id}/portal-invites); it works once.',
  })
  @Optional()
  @IsTrimmedText(200)
  invite_code?: string;

  @ApiPropertyOptional({
    example: 'acme-fiber',
    maxLength: 63,
    description: "The tenant's slug (with email, code).",
  })
  @Optional()
  @Trim()
  @IsString()
  @Matches(SLUG, { message: 'tenant must be a tenant slug (2–63 lowercase letters, digits or dashes)' })
  tenant?: string;

  @ApiPropertyOptional({
    example: 'ada@example.com',
    maxLength: 254,
    description: 'The email the code was sent to (with tenant, code).',
  })
  @Optional()
  @Trim()
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be a valid email address' })
  email?: string;

  @ApiPropertyOptional({
    example: '042917',
    maxLength: 20,
    description: 'The six-digit code of POST /portal/sign-in-codes (with tenant, email); it works once.',
  })
  @Optional()
  @IsTrimmedText(20)
  code?: string;
}

@ApiSchema({ description: 'A request for a one-time sign-in code by email.' })
export class RequestSignInCodeDto {
  @ApiProperty({ example: 'acme-fiber', maxLength: 63, description: "The tenant's slug." })
  @Trim()
  @IsString()
  @Matches(SLUG, { message: 'tenant must be a tenant slug (2–63 lowercase letters, digits or dashes)' })
  tenant: string;

  @ApiProperty({ example: 'ada@example.com', maxLength: 254, description: "The subscriber's email." })
  @Trim(254)
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be a valid email address' })
  email: string;
}

@ApiSchema({
  description:
    'A sign-in code request taken: the same answer whether or not a subscriber has the email (a code is mailed ' +
    'only when one does).',
})
export class SignInCodeRequestedDto {
  @ApiProperty({ example: 'ada@example.com', description: 'The email, normalised (trimmed, lower case).' })
  email: string;

  @ApiProperty({
    example: 600,
    type: 'integer',
    minimum: 60,
    description: 'How long a mailed code signs in (PORTAL_CODE_TTL_S).',
  })
  expires_in_s: number;
}

@ApiSchema({
  description: 'A one-time sign-in code requested by email, without its code (never stored in clear).',
})
export class PortalSignInCodeDto {
  @ApiProperty({ example: 'psc_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber it signs in.' })
  subscriber_id: string;

  @ApiProperty({ example: '2026-11-21T10:10:00.000Z', description: 'After it the code no longer signs in.' })
  expires_at: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' })
  created_at: string;

  static from(row: PortalSignInCode): PortalSignInCodeDto {
    return {
      id: row.id,
      subscriber_id: row.subscriberId,
      expires_at: row.expiresAt.toISOString(),
      created_at: row.createdAt.toISOString(),
    };
  }
}

@ApiSchema({ description: 'A portal session, without its token.' })
export class PortalSessionDto {
  @ApiProperty({ example: 'pss_01JD3Z6W3R4T5Y6U7I8O9P0QAB' })
  id: string;

  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The one subscriber it acts for.' })
  subscriber_id: string;

  @ApiProperty({
    enum: ['invite', 'code'],
    example: 'invite',
    description: 'How the subscriber signed in: an invite code, or an emailed sign-in code.',
  })
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

@ApiSchema({ description: "A plan one of the subscriber's services is on, as the portal shows it." })
export class PortalPlanDto {
  @ApiProperty({
    example: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'What a service names as plan_id.',
  })
  id: string;

  @ApiProperty({ example: 'Fiber 500' })
  name: string;

  @ApiProperty({ example: 500_000, type: 'integer', description: 'Download rate, kbit/s.' })
  download_kbps: number;

  @ApiProperty({ example: 100_000, type: 'integer', description: 'Upload rate, kbit/s.' })
  upload_kbps: number;
}

@ApiSchema({
  description: 'The signed-in portal session: its subscriber and what the portal shows of the tenant.',
})
export class PortalSessionInfoDto extends PortalSessionDto {
  @ApiProperty({ type: PortalTenantDto })
  tenant: PortalTenantDto;

  @ApiProperty({
    type: [PortalPlanDto],
    description:
      "The plans the subscriber's services are on (name and rates), for the portal to show by plan_id: the plan " +
      'catalog itself (/service-plans) stays operator-only.',
  })
  plans: PortalPlanDto[];
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
