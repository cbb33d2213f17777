import { Injectable } from '@nestjs/common';
import { AppConfigurationsRepository } from '../app-configurations/app-configurations.repository.js';
import { OAuth2Service } from '../oauth2/oauth2.service.js';

/** How the end user (or the developer) can link the account a call needs. */
export interface AccountLink {
  /** An address to open in the end user's browser; null when the developer must link the account. */
  url: string | null;
  /** One sentence for the model (and the user) saying what to do. */
  message: string;
}

/**
 * The one place MCP asks for a linking address. Interim, until connect links (issue #12) land: for
 * an app configured with oauth2 it starts the OAuth 2.0 flow on the server and hands over the
 * provider's authorization URL (it carries only the opaque state); for other schemes it says how the
 * developer links the account. Switching to connect links replaces only this provider.
 */
@Injectable()
export class AccountLinking {
  constructor(
    private readonly configurations: AppConfigurationsRepository,
    private readonly oauth2: OAuth2Service,
  ) {}

  async linkFor(projectId: string, appName: string, ownerId: string): Promise<AccountLink> {
    const configuration = await this.configurations.findForProject(projectId, appName);
    if (configuration?.security_scheme === 'oauth2') {
      const { url } = await this.oauth2.startOAuth2Linking(projectId, {
        app_name: appName,
        linked_account_owner_id: ownerId,
      });
      return {
        url,
        message: `Open this address to connect your ${appName} account, then ask me to try again: ${url}`,
      };
    }
    const scheme = configuration?.security_scheme ?? 'the configured security scheme';
    return {
      url: null,
      message:
        `The ${appName} account of this user is not linked. The developer of this application links it ` +
        `(POST /v1/linked-accounts/${scheme.replace(/_/g, '-')} with linked_account_owner_id ${ownerId}); then try again.`,
    };
  }
}
