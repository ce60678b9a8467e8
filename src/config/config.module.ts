import { DynamicModule, Global, Module } from '@nestjs/common';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from './app-config';

@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig, clock: Clock = new Clock()): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: Clock, useValue: clock },
      ],
      exports: [APP_CONFIG, Clock],
    };
  }
}
