/**
 * class-validator only carries a message per failed constraint, so the decorators encode the stable
 * machine `type` (and an array index when there is one) into that message; the pipe decodes it.
 */
export interface EncodedIssue {
  type: string;
  msg: string;
  index?: number;
}

export function encodeIssue(type: string, msg: string, index?: number): string {
  return JSON.stringify(index === undefined ? { type, msg } : { type, msg, index });
}

export function decodeIssue(constraint: string, message: string): EncodedIssue {
  try {
    const parsed = JSON.parse(message) as EncodedIssue;
    if (typeof parsed.type === 'string' && typeof parsed.msg === 'string') {
      return parsed;
    }
  } catch {
    // a constraint without an encoded message: fall through
  }
  return { type: constraint, msg: message };
}
