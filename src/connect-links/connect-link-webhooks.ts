import { createHmac } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';

export const SIGNATURE_HEADER = 'x-patchbay-signature';
const DELIVERY_TIMEOUT_MS = 10_000;

export interface ConnectLinkEvent {
  event: 'connect_link.completed' | 'connect_link.failed';
  connect_link_id: string;
  app_name: string;
  linked_account_owner_id: string;
  linked_account_id: string | null;
  /** Only for failures: the machine word of the reason (never a credential). */
  error?: string;
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, so that a receiver can refuse replays of old events. */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

/**
 * Delivers connect-link events to the developer's webhook: a signed JSON POST, retried with
 * exponential backoff until a 2xx answer or the last attempt. Delivery runs in the background of
 * the request that completed the link; pending retries are dropped when the service stops.
 */
@Injectable()
export class ConnectLinkWebhooks implements OnApplicationShutdown {
  private readonly logger = new Logger(ConnectLinkWebhooks.name);
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly config: AppConfig) {}

  send(url: string, secret: string, event: ConnectLinkEvent): void {
    const body = JSON.stringify(event);
    void this.attempt(url, secret, body, 1);
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    for (const timer of this.timers) {
      clearTimeout(timer);
    }
    this.timers.clear();
  }

  private async attempt(url: string, secret: string, body: string, attempt: number): Promise<void> {
    if (this.stopped) {
      return;
    }
    let outcome: string;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Patchbay-Webhooks',
          [SIGNATURE_HEADER]: signWebhook(secret, Math.floor(Date.now() / 1000), body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      await response.body?.cancel();
      if (response.ok) {
        return;
      }
      outcome = `HTTP ${response.status}`;
    } catch (error) {
      outcome = error instanceof Error ? error.name : 'error';
    }
    // The origin only: a webhook URL's path or query may hold the developer's own token.
    const origin = new URL(url).origin;
    if (attempt >= this.config.CONNECT_LINK_WEBHOOK_ATTEMPTS || this.stopped) {
      this.logger.warn(`Connect-link webhook to ${origin} failed after ${attempt} attempts (${outcome})`);
      return;
    }
    const delay = this.config.CONNECT_LINK_WEBHOOK_BACKOFF_MS * 2 ** (attempt - 1);
    this.logger.debug(`Connect-link webhook to ${origin}: ${outcome}; retry in ${delay} ms`);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.attempt(url, secret, body, attempt + 1);
    }, delay);
    this.timers.add(timer);
  }
}
