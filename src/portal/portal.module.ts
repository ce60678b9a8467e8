import { Module } from '@nestjs/common';
import { BillingModule } from '../billing';
import { PORTAL_CODE_MINTER, PORTAL_GATE } from '../common/auth/portal';
import { EventsModule } from '../events';
import { GatewayModule } from '../gateway';
import { ProvisioningModule } from '../provisioning';
import { SubscribersModule } from '../subscribers';
import { TicketsModule } from '../tickets';
import { PortalBindingInterceptor } from './portal-binding.interceptor';
import { PortalController } from './portal.controller';
import { PortalPurge } from './portal-purge';
import { PortalRepository } from './portal.repository';
import { PortalService } from './portal.service';
import { PortalCodesService } from './portal-codes.service';
import { PortalSessionWriter } from './portal-session-writer';

/**
 * Subscriber-scoped access (docs/portal.md): invites, portal sessions (the gateway's auth guard finds PORTAL_GATE to
 * authenticate their tokens), and the interceptor that holds a portal session's requests to its subscriber.
 */
@Module({
  imports: [GatewayModule, EventsModule, SubscribersModule, BillingModule, ProvisioningModule, TicketsModule],
  controllers: [PortalController],
  providers: [
    PortalRepository,
    PortalService,
    PortalCodesService,
    PortalSessionWriter,
    PortalPurge,
    PortalBindingInterceptor,
    { provide: PORTAL_GATE, useExisting: PortalService },
    // The notifications worker finds it at run time to mint a portal mail's code (notifications imports no portal).
    { provide: PORTAL_CODE_MINTER, useExisting: PortalCodesService },
  ],
  exports: [PortalBindingInterceptor, PortalPurge, PORTAL_GATE, PORTAL_CODE_MINTER],
})
export class PortalModule {}
