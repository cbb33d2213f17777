import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { AuditEventsController } from './audit-events.controller.js';

/** /v1/audit-events: a project's audit log, read with its API key (the records are AuditModule's). */
@Module({
  imports: [AuditModule],
  controllers: [AuditEventsController],
})
export class AuditEventsModule {}
