/** What the audit module offers outside it: its module, the recorder and the actors it names. */
export { AuditModule } from './audit.module.js';
export { AuditRepository } from './audit.repository.js';
export { AuditService } from './audit.service.js';
export { CLI_ACTOR, SYSTEM_ACTOR, type Actor } from './actor.js';
