import { Injectable } from '@nestjs/common';
import type { Actor } from '../audit/actor.js';
import { ConnectLinksService } from '../connect-links/connect-links.service.js';

/** How the end user can link the account a call needs. */
export interface AccountLink {
  /** An address to open in the end user's browser. */
  url: string;
  /** One sentence for the model (and the user) saying what to do. */
  message: string;
}

/**
 * The one place MCP asks for a linking address: a connect link for the app and the owner, whatever
 * the configuration's scheme (OAuth 2.0 button, a form for a key or password, or a confirmation).
 * The URL carries only the link's id and its single-use token — no credential, no owner id.
 */
@Injectable()
export class AccountLinking {
  constructor(private readonly connectLinks: ConnectLinksService) {}

  async linkFor(projectId: string, actor: Actor, appName: string, ownerId: string): Promise<AccountLink> {
    const { url } = await this.connectLinks.create(projectId, actor, { appName, ownerId });
    return {
      url,
      message: `Open this address to connect your ${appName} account, then ask me to try again: ${url}`,
    };
  }
}
