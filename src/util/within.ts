/** `p`'s value, or undefined when it has not settled within `ms` (it may settle later, unheard). */
export function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let bound: NodeJS.Timeout | undefined;
  const timeUp = new Promise<undefined>((resolve) => {
    bound = setTimeout(() => resolve(undefined), ms);
    bound.unref();
  });
  return Promise.race([p, timeUp]).finally(() => clearTimeout(bound));
}
