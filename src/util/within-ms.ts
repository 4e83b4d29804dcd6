/** `work`'s result, or a rejection once `ms` have passed (the timer is cleared either way). */
export function withinMs<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Whether `work` resolves within `ms`: false when it rejects or is late. */
export function answersWithinMs(ms: number, work: Promise<unknown>): Promise<boolean> {
  return withinMs(ms, work).then(
    () => true,
    () => false,
  );
}
