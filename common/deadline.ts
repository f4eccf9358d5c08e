/**
 * `work`'s outcome, or `late()`'s once `ms` have passed without one (what `late` throws, the
 * promise rejects with). The timer is cleared either way, so a settled wait keeps no process alive.
 * `work` itself is not stopped: the caller decides what a late one means.
 */
export async function within<T, L>(work: Promise<T>, ms: number, late: () => L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const overdue = new Promise<L>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(late());
      } catch (error) {
        reject(error);
      }
    }, ms);
  });
  try {
    return await Promise.race([work, overdue]);
  } finally {
    clearTimeout(timer);
  }
}
