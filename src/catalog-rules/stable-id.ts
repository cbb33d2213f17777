import { v5 as uuidv5 } from 'uuid';

/** Patchbay's UUID v5 namespace for catalogue items (a fixed random UUID). */
const CATALOG_NAMESPACE = '2f8c7a4e-5b1d-4c3a-9e6f-0d7b8a1c2e34';

/**
 * The id of a catalogue app or function, for clients that expect one (ACI's app details): derived
 * from its kind and unique name, so it is the same on every instance and database and across
 * re-imports, with nothing stored.
 */
export function stableId(kind: 'app' | 'function', name: string): string {
  return uuidv5(`${kind}:${name}`, CATALOG_NAMESPACE);
}
