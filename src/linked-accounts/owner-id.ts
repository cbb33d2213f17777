import { Column } from 'typeorm';
import { RequiredString } from '../../libs/common/src/index.js';

/** The longest linked_account_owner_id accepted and stored (every column holding one is varchar of it). */
export const OWNER_ID_MAX_LENGTH = 255;

/** A column holding a linked_account_owner_id. */
export function OwnerIdColumn(): PropertyDecorator {
  return Column('varchar', { length: OWNER_ID_MAX_LENGTH });
}

/** A linked_account_owner_id a request must name: 1 to OWNER_ID_MAX_LENGTH characters. */
export function RequiredOwnerId(description: string): PropertyDecorator {
  return RequiredString({ description, minLength: 1, maxLength: OWNER_ID_MAX_LENGTH, example: 'user-42' });
}
