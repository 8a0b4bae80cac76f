import { setMaxListeners } from 'node:events';

/**
 * An AbortController whose signal every call or slot of one SDK object listens
 * on (its close or stop). Node warns of a "possible memory leak" past 10
 * listeners on one signal; here that many is the normal case (a Client with 11
 * calls in flight, a 64-slot Worker reconnecting), and each listener goes when
 * its call ends.
 */
export function sharedAbortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
