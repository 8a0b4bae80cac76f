/** The silences a node's defaults allow a stream or a long poll, for balancer timeouts to stay above. */
import { loadConfig } from '../../src/config';

const defaults = loadConfig({ env: {} });

const STREAM_SILENCES: Record<string, number> = {
  'matching.pingInterval': defaults.matching.pingInterval,
  'matching.busyStreamSilence': defaults.matching.busyStreamSilence,
  'limits.maxWait': defaults.limits.maxWait,
  'fetch.maxWait': defaults.fetch.maxWait,
};

/** The config keys whose default silence a balancer timeout of `timeoutMs` would cut (none is right). */
export function silencesCutBy(timeoutMs: number): string[] {
  return Object.entries(STREAM_SILENCES).filter(([, ms]) => timeoutMs <= ms).map(([key]) => key);
}
