import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { SubscribersController } from './subscribers.controller';
import { SubscribersRepository } from './subscribers.repository';
import { SubscribersService } from './subscribers.service';

@Module({
  imports: [EventsModule],
  controllers: [SubscribersController],
  providers: [SubscribersService, SubscribersRepository],
  exports: [SubscribersService],
})
export class SubscribersModule {}
