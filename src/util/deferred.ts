/** A promise with its resolve/reject exposed. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
  settled: boolean;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const d = {
    settled: false,
    promise: new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    }),
  } as Deferred<T>;
  d.resolve = (v) => {
    d.settled = true;
    resolve(v);
  };
  d.reject = (e) => {
    d.settled = true;
    reject(e);
  };
  return d;
}
