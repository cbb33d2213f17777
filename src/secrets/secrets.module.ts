import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { SealedColumnsRepository } from './sealed-columns.repository.js';
import { SecretsRotationService } from './secrets-rotation.service.js';

/** The sealing key ring's maintenance: re-sealing stored secrets under the newest key. */
@Module({
  imports: [AuditModule],
  providers: [SealedColumnsRepository, SecretsRotationService],
  exports: [SecretsRotationService],
})
export class SecretsModule {}
