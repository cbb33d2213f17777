import stringify from 'safe-stable-stringify';

/**
 * JSON with every object's keys sorted, the same text for the same value whatever the key order. Strict: a value
 * JSON cannot represent (NaN, a function, a cycle, a bigint) throws instead of being written as something else.
 */
export const stableJson = stringify.configure({ strict: true });
