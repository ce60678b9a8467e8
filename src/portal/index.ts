// The portal's public surface: other modules import the portal only from here (docs/architecture.md).
// Entities first: a domain whose entity references one of these may be loaded while this file is still loading.
export { PortalInvite, PortalSession, PortalSignInCode } from './portal.entity';
export { PortalBindingInterceptor } from './portal-binding.interceptor';
export { PortalPurge } from './portal-purge';
export { PortalModule } from './portal.module';
export { mountPortal, PORTAL_CSP, PORTAL_PATH } from './portal-web';
