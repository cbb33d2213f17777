import { Injectable } from '@nestjs/common';
import { SecretBox } from '../../libs/common/src/index.js';
import type { AppConfigurationSecrets } from '../app-configurations/app-configurations.service.js';
import type { AppSecrets } from '../apps/app.entity.js';
import type { DefaultCredentialsByScheme } from './credentials.js';
import type { AccountView, ConfigurationView, FunctionView } from './execution-cache.js';
import { ExecutionFailure } from './execution.errors.js';

/** Opens the sealed secrets of cached rows once per cached row, and says clearly when it cannot. */
@Injectable()
export class StoredSecrets {
  constructor(private readonly secretBox: SecretBox) {}

  account(view: AccountView): Record<string, unknown> {
    view.opened ??= this.open<Record<string, unknown>>(view.row.credentials, 'the linked account credentials');
    return view.opened;
  }

  app(view: FunctionView): AppSecrets {
    const sealed = view.fn.app.secrets;
    view.appSecrets ??= sealed ? this.open<AppSecrets>(sealed, `the secrets of app ${view.fn.app.name}`) : {};
    return view.appSecrets;
  }

  appDefaults(view: FunctionView): DefaultCredentialsByScheme {
    return this.app(view).default_security_credentials_by_scheme ?? {};
  }

  configuration(view: ConfigurationView): AppConfigurationSecrets {
    const sealed = view.row.secrets;
    view.secrets ??= sealed ? this.open<AppConfigurationSecrets>(sealed, 'the app configuration secrets') : {};
    return view.secrets;
  }

  open<T>(sealed: string, what: string): T {
    try {
      return this.secretBox.openJson<T>(sealed);
    } catch {
      throw new ExecutionFailure(
        `Cannot read ${what}: they were sealed with a key not in SECRETS_KEYS / SECRETS_KEY or are damaged`,
      );
    }
  }

  seal(value: unknown): string {
    return this.secretBox.sealJson(value);
  }
}
