import { Module } from '@nestjs/common';
import { AuditRetention } from './audit-retention.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';

/**
 * The audit log: every feature that makes administrative changes records them through AuditService; the
 * HTTP service prunes old records when AUDIT_RETENTION_DAYS is set (AuditRetention). Its REST resource,
 * /v1/audit-events, is AuditEventsModule's, which sits above the API-key guard it uses.
 */
@Module({
  providers: [AuditRepository, AuditService, AuditRetention],
  exports: [AuditService],
})
export class AuditModule {}
