import { Body, Controller, Delete, Get, HttpCode, Param, Ip, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiExtraModels, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, Public, RequireScopes } from '../common/auth/auth.decorators';
import { PortalOnly } from '../common/auth/portal';
import { ReturnsSecret } from '../common/http/returns-secret';
import type { AuthContext } from '../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS, BODY_ERRORS } from '../common/swagger/api-envelope';
import { ApiExampleBody } from '../common/swagger/api-types';
import { SkipIdempotency } from '../gateway';
import {
  CreatePortalInviteDto,
  CreatePortalSessionDto,
  IssuedPortalInviteDto,
  IssuedPortalSessionDto,
  PortalInviteDto,
  PortalSessionDto,
  PortalSessionInfoDto,
  PortalSignInCodeDto,
  RequestSignInCodeDto,
  RevokedPortalSessionsDto,
  SignInCodeRequestedDto,
} from './dto/portal.dto';
import { PortalService } from './portal.service';
import { PortalCodesService } from './portal-codes.service';

/** The portal's sign-in and session (docs/portal.md), and the operator's invites and revocations. */
@ApiTags('Portal')
@ApiExtraModels(PortalInviteDto, PortalSignInCodeDto) // the records of portal.invite_created, .sign_in_code_requested
@Controller('api/v1')
export class PortalController {
  constructor(
    private readonly portal: PortalService,
    private readonly codes: PortalCodesService,
  ) {}

  @Post('subscribers/:id/portal-invites')
  @ApiBearerAuth()
  @HttpCode(201)
  @RequireScopes('subscribers:write')
  @SkipIdempotency() // the answer holds the code, which is never stored
  @ReturnsSecret()
  @ApiOperation({
    summary: 'Invite a subscriber to the portal: a one-time code and link, in this answer or by email',
    description:
      'delivery link (the default): hand the link (or the code) in this answer to the subscriber through your own ' +
      'channel. delivery email: the subscriber is mailed the link and the code (notification kind portal_invite), ' +
      'and the answer holds neither; 422 on delivery when the subscriber has no email or the tenant switched ' +
      'portal_invite off. POST /portal/sessions with the code signs in once, before expires_at ' +
      '(PORTAL_INVITE_TTL_S, 7 days). Each invite is a portal.invite_created event, which never holds the code.',
  })
  @ApiEnvelope(IssuedPortalInviteDto, { status: 201 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found', 'invalid_state_transition')
  @ApiBody({
    type: CreatePortalInviteDto,
    required: false, // no body is delivery link, as before delivery existed
    examples: { default: { summary: 'A first call on a fresh server', value: { delivery: 'email' } } },
  })
  async createPortalInvite(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: CreatePortalInviteDto,
  ): Promise<IssuedPortalInviteDto> {
    return this.portal.invite(auth, id, dto.delivery);
  }

  @Post('portal/sign-in-codes')
  @Public()
  @HttpCode(202)
  @SkipIdempotency() // public, and the same answer every time
  @ApiOperation({
    summary: 'Mail a one-time sign-in code to a subscriber of the tenant with this email',
    description:
      'Public. The answer is the same whether or not a live subscriber of the tenant has the email (no ' +
      'enumeration); when one has, a six-digit code is mailed (notification kind portal_sign_in_code), valid ' +
      'PORTAL_CODE_TTL_S (10 min), once, for at most 5 tries, and it supersedes the older codes of that ' +
      'subscriber. Limited per email (PORTAL_CODE_MAX_PER_EMAIL per PORTAL_CODE_WINDOW_S, counted whether or not ' +
      'the email exists) and per IP (PORTAL_SIGN_IN_MAX_PER_IP): 429 rate_limited with Retry-After. Each request ' +
      'for a subscriber is a portal.sign_in_code_requested event, which never holds the code.',
  })
  @ApiEnvelope(SignInCodeRequestedDto, { status: 202 })
  @ApiErrors(...BODY_ERRORS, 'rate_limited', 'abuse_blocked', 'service_unavailable')
  @ApiExampleBody(RequestSignInCodeDto, { tenant: 'acme-fiber', email: 'ada@example.com' })
  async createPortalSignInCode(
    @Ip() ip: string | undefined,
    @Body() dto: RequestSignInCodeDto,
  ): Promise<SignInCodeRequestedDto> {
    return this.codes.request(dto, ip ?? 'unknown');
  }

  @Delete('subscribers/:id/portal-sessions')
  @ApiBearerAuth()
  @RequireScopes('subscribers:write')
  @ApiOperation({
    summary: 'End every portal session of a subscriber; their tokens stop working at once',
    description: 'Each ended session is a portal.session_revoked event; none live answers revoked 0.',
  })
  @ApiEnvelope(RevokedPortalSessionsDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async revokePortalSessions(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
  ): Promise<RevokedPortalSessionsDto> {
    return this.portal.revokeAll(auth, id);
  }

  @Post('portal/sessions')
  @Public()
  @HttpCode(201)
  @SkipIdempotency() // the answer holds the token, which is never stored
  @ReturnsSecret()
  @ApiOperation({
    summary:
      'Sign in to the portal with an invite code or an emailed code: a session token bound to its subscriber',
    description:
      'Public. Either invite_code alone, or tenant, email and code (POST /portal/sign-in-codes). A code works once ' +
      '(401 invalid_invite or invalid_code after, or when unknown, superseded or expired; a sign-in code dies after ' +
      '5 wrong tries); attempts are limited per IP (PORTAL_SIGN_IN_MAX_PER_IP per PORTAL_SIGN_IN_WINDOW_S, then ' +
      '429), and a refused one counts as a failed authentication. The token (scope `portal`) lives ' +
      'PORTAL_SESSION_TTL_S (12 h) and may call only what docs/portal.md lists, for its own subscriber. Each ' +
      'sign-in is a portal.signed_in event.',
  })
  @ApiEnvelope(IssuedPortalSessionDto, { status: 201 })
  @ApiErrors(
    ...BODY_ERRORS,
    'invalid_invite',
    'invalid_code',
    'rate_limited',
    'abuse_blocked',
    'service_unavailable',
  )
  @ApiExampleBody(CreatePortalSessionDto, { invite_code: 'ipi_x4Jx2Vb9mXq0M1QeQ0kq2Q6yM3nN7d0W' })
  async createPortalSession(
    // @Ip(), not @Req(): a handler reading the whole request is exempt from the undeclared-input checks.
    @Ip() ip: string | undefined,
    @Body() dto: CreatePortalSessionDto,
  ): Promise<IssuedPortalSessionDto> {
    return this.portal.signIn(dto, ip ?? 'unknown');
  }

  @Get('portal/session')
  @ApiBearerAuth()
  @PortalOnly()
  @ApiOperation({
    summary: 'The signed-in portal session: its subscriber and what the portal shows of the tenant',
    description: 'Needs a portal session token (an API token gets 403 insufficient_scope).',
  })
  @ApiEnvelope(PortalSessionInfoDto)
  @ApiErrors(...AUTH_ERRORS)
  async getPortalSession(@Auth() auth: AuthContext): Promise<PortalSessionInfoDto> {
    return this.portal.info(auth);
  }

  @Delete('portal/session')
  @ApiBearerAuth()
  @PortalOnly()
  @ApiOperation({
    summary: 'Sign out of the portal: the session token stops working at once',
    description: 'A portal.session_revoked event with the subscriber as actor.',
  })
  @ApiEnvelope(PortalSessionDto)
  @ApiErrors(...AUTH_ERRORS)
  async deletePortalSession(@Auth() auth: AuthContext): Promise<PortalSessionDto> {
    return this.portal.signOut(auth);
  }
}
