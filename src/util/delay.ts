/** A delay that ends early (rejecting with AbortError) when the signal aborts. */
export { delay, abortable, isAbortError, AbortError, waitForEvent } from 'abort-controller-x';
