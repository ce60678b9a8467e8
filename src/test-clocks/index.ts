// The test clocks domain's public surface (docs/architecture.md).
export { TestClocksModule } from './test-clocks.module';
