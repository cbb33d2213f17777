import { Initial1763884800000 } from './1763884800000-Initial.js';

/** Applied in this order; a new migration is appended here. */
export const MIGRATIONS = [Initial1763884800000];
