import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { hashBearerSecret } from '../../libs/common/src/index.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { ProjectsRepository } from './projects.repository.js';

/**
 * What is kept of a key's SHA-256 (hex): its first 30 bits, a small integer V8 stores in the set itself. A wrong key
 * matches one of n keys by chance once in 2^30 / n (at 100,000 keys, one in 10,000), and then costs the lookup it
 * would have cost anyway. 100,000 keys take 2.6 MB of heap; the first 16 hex digits as strings took 13.9 MB.
 */
const hashBits = (keyHash: string): number => Number.parseInt(keyHash.slice(0, 8), 16) >>> 2;
const RETRY_MS = 5_000;

/**
 * Which API keys exist, on every instance: a part of the hash of each key that is
 * neither revoked nor expired, read from the database at start and again whenever any instance creates or revokes
 * one (change topic `api_keys`). Issue #34: from an address over its failure budget, a flood of new random keys,
 * each shaped like a key, would otherwise cost a database lookup apiece (601 µs of the service's CPU per request
 * on the embedded database, 2026-11-29, with the valid requests' median beside it going from 1.8 to 4.8 ms);
 * a key whose hash is not here is refused with a SHA-256 and one set look-up instead.
 *
 * Only ever used to refuse early, never to accept: a key found here is still checked by the database. While the
 * copy may be behind (not yet read, a change announced and not yet read again, or no LISTEN connection to hear
 * other instances on), every key "may exist". A key created on another instance is known here once its
 * notification arrives, milliseconds after its creation; within them, a request with it from a blocked address
 * is refused with the 429 a retry gets past.
 */
@Injectable()
export class KnownKeys implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('KnownKeys');
  private hashes = new Set<number>();
  /** Changes announced so far, and the count the copy was read after. */
  private announced = 0;
  private read = -1;
  /** The change notifications' connection the copy was read under (see ChangeNotifications.epoch). */
  private readEpoch: number | undefined;
  private reading: Promise<void> | null = null;
  private retry?: NodeJS.Timeout;
  private unsubscribe?: () => void;

  constructor(
    private readonly projects: ProjectsRepository,
    private readonly changes: ChangeNotifications,
  ) {}

  /** Reads the usable keys before the service takes requests (a failed read is retried; meanwhile any key may exist). */
  async onApplicationBootstrap(): Promise<void> {
    this.unsubscribe = this.changes.subscribe('api_keys', () => {
      this.announced += 1;
      this.refresh();
    });
    await this.changes.connected();
    this.refresh();
    await this.reading;
  }

  onApplicationShutdown(): void {
    this.unsubscribe?.();
    clearTimeout(this.retry);
  }

  /** False only when the copy is current and no usable key has this key's hash. */
  mayExist(apiKey: string): boolean {
    const epoch = this.changes.epoch;
    if (epoch === undefined) {
      // Other instances' changes cannot be heard now; the reconnection announces that anything may have changed.
      return true;
    }
    if (this.read !== this.announced || this.readEpoch !== epoch) {
      this.refresh();
      return true;
    }
    return this.hashes.has(hashBits(hashBearerSecret(apiKey)));
  }

  private refresh(): void {
    if (this.reading) {
      return;
    }
    this.reading = this.readAll()
      .catch((error: unknown) => {
        this.logger.warn(`Cannot read the usable API keys: ${(error as Error).message}`);
        clearTimeout(this.retry);
        this.retry = setTimeout(() => this.refresh(), RETRY_MS);
        this.retry.unref();
      })
      .finally(() => {
        this.reading = null;
      });
  }

  /** Reads again until no change was announced during a read. */
  private async readAll(): Promise<void> {
    for (;;) {
      const announced = this.announced;
      const epoch = this.changes.epoch;
      if (epoch === undefined) {
        return;
      }
      const hashes = new Set((await this.projects.usableKeyHashes()).map(hashBits));
      this.hashes = hashes;
      this.read = announced;
      this.readEpoch = epoch;
      if (this.announced === announced && epoch === this.changes.epoch) {
        return;
      }
    }
  }
}
