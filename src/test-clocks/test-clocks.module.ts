import { Module } from '@nestjs/common';
import { AutomationModule } from '../automation';
import { BillingModule } from '../billing';
import { EventsModule } from '../events';
import { TenancyModule } from '../gateway';
import { TestClockAdvancer } from './test-clock-advancer';
import { TestClocksApi } from './test-clocks.api';
import { TestClocksController } from './test-clocks.controller';

/** Test clocks (docs/test-clocks.md): a test tenant's time, moved forward by advances that do what falls due. */
@Module({
  imports: [EventsModule, TenancyModule, BillingModule, AutomationModule],
  controllers: [TestClocksController],
  providers: [TestClocksApi, TestClockAdvancer],
})
export class TestClocksModule {}
