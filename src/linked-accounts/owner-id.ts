/** The longest linked_account_owner_id accepted and stored (every column holding one is varchar of it). */
export const OWNER_ID_MAX_LENGTH = 255;
