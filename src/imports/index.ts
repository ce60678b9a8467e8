// The imports domain's public surface: other modules import imports only from here (docs/architecture.md).
export { ImportsPurge } from './imports-purge';
export { ImportsModule } from './imports.module';
