import { type DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigModule as NestConfigModule, ConfigService } from '@nestjs/config';
import { AppConfig, loadConfig } from './app-config.js';
import { secretBoxProvider } from './secret-box.provider.js';
import { SecretBox } from '../../libs/common/src/index.js';

/**
 * Carries the configuration, parsed and validated once, to everything that injects the typed
 * `AppConfig`. `forRoot(config)` takes a configuration the caller already parsed (the API app parses
 * its environment once and passes it down); without one, the process environment is parsed here.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config?: AppConfig): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      imports: [
        NestConfigModule.forRoot({
          ignoreEnvFile: true,
          load: [() => ({ app: config ?? loadConfig(process.env) })],
        }),
      ],
      providers: [
        {
          provide: AppConfig,
          inject: [ConfigService],
          useFactory: (service: ConfigService) => service.getOrThrow<AppConfig>('app'),
        },
        secretBoxProvider,
      ],
      exports: [AppConfig, SecretBox],
    };
  }
}
