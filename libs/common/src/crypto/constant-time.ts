import { timingSafeEqual } from 'node:crypto';

/** Whether two secrets (tokens, CSRF values) are equal, compared in time that does not depend on where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
