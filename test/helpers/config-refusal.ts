import { loadConfig } from '../../src/config';

/** The one line a config is refused with at boot, or 'accepted'. */
export function configRefusal(env: Record<string, string>): string {
  try {
    loadConfig({ env });
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
}
