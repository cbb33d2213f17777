import { Injectable } from '@nestjs/common';
import { SecretBox } from '../../libs/common/src/index.js';
import type { AppConfigurationSecrets } from '../app-configurations/app-configurations.service.js';
import type { AppSecrets } from '../apps/app.entity.js';
import type { DefaultCredentialsByScheme, SecurityScheme } from '../apps/security-scheme.js';
import type { CredentialsByScheme } from '../linked-accounts/credentials.js';
import type { AccountView, ConfigurationView, FunctionView } from './execution-cache.js';
import { ExecutionFailure } from './execution.errors.js';

/** Opens the sealed secrets of cached rows once per cached row, and says clearly when it cannot. */
@Injectable()
export class StoredSecrets {
  constructor(private readonly secretBox: SecretBox) {}

  /**
   * The account's credentials, as its scheme stores them (linking writes that shape, and execution runs an
   * account only with its own scheme: the scheme pre-check). Fields may still be missing in rows written
   * by hand, so strategies fall back to the app's defaults or fail clearly when one is.
   */
  account<S extends SecurityScheme>(view: AccountView, _scheme: S): Partial<CredentialsByScheme[S]> {
    view.opened ??= this.open<object>(view.row.credentials, 'the linked account credentials');
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
