/**
 * A signal that aborts when `outer` does or after `ms`, whichever comes first.
 *
 * Not `AbortSignal.any([outer, AbortSignal.timeout(ms)])`: the composite holds its
 * sources weakly, so on Node 20 a collection can take the timeout signal with it and
 * the composite then never aborts (nodejs/node#57736). Here the timer is an ordinary
 * one, held until it fires or `dispose()` clears it once the work settles.
 */
export function boundedSignal(outer: AbortSignal, ms: number): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  if (outer.aborted) {
    controller.abort(outer.reason);
    return { signal: controller.signal, dispose: () => undefined };
  }
  const onOuter = (): void => {
    clearTimeout(timer);
    controller.abort(outer.reason);
  };
  const timer = setTimeout(() => {
    outer.removeEventListener('abort', onOuter);
    controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError'));
  }, ms);
  outer.addEventListener('abort', onOuter, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      outer.removeEventListener('abort', onOuter);
    },
  };
}
