import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from '../projects/api-key.guard.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import { AuditEventPublic, AuditEventsQuery } from '../audit/audit.dto.js';
import { AuditService } from '../audit/audit.service.js';

@ApiTags('audit-events')
@ApiSecurity(API_KEY_HEADER)
@Controller('v1/audit-events')
export class AuditEventsController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({
    summary: 'List the administrative changes of the caller project, newest first',
    description:
      'Who changed what and when: app configurations, linked accounts, connect links, MCP tokens (also revoked ' +
      'at the MCP authorization server), the MCP identity provider and OAuth clients, API keys. `before` and ' +
      '`after` hold allow-listed fields only, ' +
      'never a credential, token or secret.',
  })
  @ApiOkResponse({ type: [AuditEventPublic] })
  @ApiErrors([401], { validated: true })
  listAuditEvents(@CurrentProject() projectId: string, @Query() query: AuditEventsQuery): Promise<AuditEventPublic[]> {
    return this.audit.listAuditEvents(projectId, query);
  }
}
