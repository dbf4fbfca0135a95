// What main.ts needs of a page.
export interface Page {
  root: HTMLElement;
  refresh(): void; // re-read everything (after a reconnection)
  dispose(): void;
}

// Coalesces calls: the first schedules `fn` in `ms`, later ones before it runs are absorbed,
// so a burst of events causes one reload and a steady stream one per `ms`.
export function coalesce(fn: () => void, ms: number): { (): void; cancel(): void } {
  let timer: number | undefined;
  const call = () => {
    if (timer !== undefined) return;
    timer = window.setTimeout(() => {
      timer = undefined;
      fn();
    }, ms);
  };
  call.cancel = () => {
    window.clearTimeout(timer);
    timer = undefined;
  };
  return call;
}
