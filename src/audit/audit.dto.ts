import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import {
  encodeIssue,
  OptionalDateTime,
  OptionalEnum,
  OptionalInt,
  OptionalString,
} from '../../libs/common/src/index.js';
import { ACTOR_TYPES, type ActorType } from './actor.js';
import { AUDIT_ACTIONS, AUDIT_RESOURCE_TYPES, type AuditAction, type AuditResourceType } from './audited-resources.js';

export const AUDIT_EVENTS_MAX_LIMIT = 100;

const UUID_PATTERN = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const ACTOR = new RegExp(`^(?:${ACTOR_TYPES.join('|')}|${UUID_PATTERN})$`);

/** An actor filter: a kind of actor, or the id of one API key or MCP token. */
function OptionalActor(): PropertyDecorator {
  return applyDecorators(
    OptionalString({
      description:
        `Only changes by this actor: an API key's or MCP token's id, or every actor of a kind ` +
        `(${ACTOR_TYPES.map((type) => `\`${type}\``).join(', ')})`,
      example: 'cli',
    }),
    Matches(ACTOR, {
      message: encodeIssue(
        'string_pattern_mismatch',
        `Input should be a UUID or one of ${ACTOR_TYPES.map((type) => `'${type}'`).join(', ')}`,
      ),
    }),
  );
}

export class AuditEventsQuery {
  @OptionalEnum(AUDIT_ACTIONS, {
    enumName: 'AuditAction',
    description: 'Only changes of this kind',
  })
  action?: AuditAction;

  @OptionalEnum(AUDIT_RESOURCE_TYPES, {
    enumName: 'AuditResourceType',
    description: 'Only changes of resources of this type',
  })
  resource_type?: AuditResourceType;

  @OptionalString({
    description: 'Only changes of this resource (its id; an app configuration by its id, not its app name)',
    maxLength: 255,
  })
  resource_id?: string;

  @OptionalActor()
  actor?: string;

  @OptionalDateTime({
    description: 'Only changes made at or after this time (RFC 3339 date-time)',
    example: '2026-06-03T00:00:00Z',
  })
  since?: string;

  @OptionalDateTime({
    description: 'Only changes made before this time (RFC 3339 date-time); fixes the pages of a listing',
    example: '2026-06-04T00:00:00Z',
  })
  until?: string;

  @OptionalInt({
    description: 'Maximum changes per response',
    default: AUDIT_EVENTS_MAX_LIMIT,
    min: 1,
    max: AUDIT_EVENTS_MAX_LIMIT,
  })
  limit: number = AUDIT_EVENTS_MAX_LIMIT;

  @OptionalInt({ description: 'Number of changes to skip', default: 0, min: 0 })
  offset: number = 0;
}

export class AuditEventPublic {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, format: 'uuid' })
  project_id: string;

  @ApiProperty({
    enum: ACTOR_TYPES,
    enumName: 'AuditActorType',
    description:
      'Who made the change: an API key, an MCP token, an MCP client at its authorization server (revoking ' +
      'its own token), the command line, or the service itself (an end user completing a connect link or an ' +
      'OAuth 2.0 flow, a token family revoked because a refresh token or code was used twice)',
  })
  actor_type: ActorType;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The id of the API key or MCP token (never its value), or the OAuth client id of an MCP client; null ' +
      'for `cli` and `system`',
  })
  actor_id: string | null;

  @ApiProperty({ enum: AUDIT_ACTIONS, enumName: 'AuditAction', example: 'app_configuration.created' })
  action: AuditAction;

  @ApiProperty({ enum: AUDIT_RESOURCE_TYPES, enumName: 'AuditResourceType', example: 'app_configuration' })
  resource_type: AuditResourceType;

  @ApiProperty({ type: String, nullable: true, description: 'The id of the changed resource' })
  resource_id: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description:
      'The resource before the change (for an update: only the fields that changed); allow-listed fields, ' +
      'never a secret. Null for a creation',
  })
  before: Record<string, unknown> | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'The resource after the change, as `before`. Null for a deletion',
  })
  after: Record<string, unknown> | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}
