import { vi } from 'vitest';

/**
 * Runs `during` (a request, say) with `meanwhile` committed right after the first call it makes to
 * any method of the repository `target` has returned: between the read and the write of a
 * read-modify-write update. The repository still does its real work; it is only instrumented.
 * Throws when `during` never called `target`, so a test using it cannot pass vacuously.
 */
export async function withWriteBetween<T>(
  target: object,
  meanwhile: () => Promise<void>,
  during: () => Promise<T>,
): Promise<T> {
  const prototype = Object.getPrototypeOf(target) as object;
  const names = Object.getOwnPropertyNames(prototype).filter((name) => {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
    return name !== 'constructor' && typeof descriptor?.value === 'function';
  });
  let ran = false;
  const spies = names.map((name) => {
    const original = (target as Record<string, (...args: unknown[]) => unknown>)[name];
    return vi
      .spyOn(target as Record<string, (...args: unknown[]) => unknown>, name)
      .mockImplementation(async (...args: unknown[]) => {
        const result = await original.apply(target, args);
        if (!ran) {
          ran = true;
          await meanwhile();
        }
        return result;
      });
  });
  let result: T;
  try {
    result = await during();
  } finally {
    spies.forEach((spy) => spy.mockRestore());
  }
  if (!ran) {
    throw new Error('the request never reached the repository');
  }
  return result;
}
