import type { AuditChange, AuditService } from '../../src/audit/audit.service.js';
import type { ChangeNotifications, ChangeTopic } from '../../src/database/change-notifications.js';

/**
 * For the unit specs of services that publish changes and audit them: the two collaborators, recording into
 * arrays the spec reads instead of writing to a database.
 */
export function recordingChanges(published: ChangeTopic[]): ChangeNotifications {
  const changes = {
    publish: (topic: ChangeTopic) => {
      published.push(topic);
      return Promise.resolve();
    },
  };
  return changes as unknown as ChangeNotifications;
}

export function recordingAudit(audited: AuditChange[]): AuditService {
  const audit = {
    record: (change: AuditChange) => {
      audited.push(change);
      return Promise.resolve();
    },
  };
  return audit as unknown as AuditService;
}

/** What the service under a spec published and audited, with the two collaborators that record it. */
export class Recorded {
  readonly published: ChangeTopic[] = [];
  /** Every change the service reported to the audit log. */
  readonly audited: AuditChange[] = [];
  readonly changes = recordingChanges(this.published);
  readonly audit = recordingAudit(this.audited);
}
