// The exports module's public surface (docs/architecture.md): only the app imports it.
export { ExportsModule } from './exports.module';
