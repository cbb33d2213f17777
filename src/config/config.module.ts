import { Global, Module } from '@nestjs/common';
import { ConfigModule as NestConfigModule, ConfigService } from '@nestjs/config';
import { AppConfig, loadConfig } from './app-config.js';
import { secretBoxProvider } from './secret-box.provider.js';
import { SecretBox } from '../../libs/common/src/index.js';

/** Loads and validates the environment once; everything else injects the typed `AppConfig`. */
@Global()
@Module({
  imports: [
    NestConfigModule.forRoot({
      ignoreEnvFile: true,
      load: [() => ({ app: loadConfig(process.env) })],
    }),
  ],
  providers: [
    {
      provide: AppConfig,
      inject: [ConfigService],
      useFactory: (config: ConfigService) => config.getOrThrow<AppConfig>('app'),
    },
    secretBoxProvider,
  ],
  exports: [AppConfig, SecretBox],
})
export class ConfigModule {}
