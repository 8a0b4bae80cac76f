/**
 * Scripts fail with small negative integer codes; this is the one place that
 * turns them into typed results. No caller parses a reply itself.
 */
export enum ScriptCode {
  NotFound = -1,
  NotThisAttempt = -2,
  NotReady = -3,
  Ended = -4,
  LeaseMoved = -5,
}

/** Why a guarded mutation matched nothing. */
export type Refusal =
  | { kind: 'not-found' }
  | { kind: 'stale' }
  | { kind: 'not-ready' }
  | { kind: 'ended'; status: string }
  | { kind: 'lease-moved' };

export function refusalOf(reply: unknown[]): Refusal {
  const code = Number(reply[0]);
  switch (code) {
    case ScriptCode.NotFound:
      return { kind: 'not-found' };
    case ScriptCode.NotThisAttempt:
      return { kind: 'stale' };
    case ScriptCode.NotReady:
      return { kind: 'not-ready' };
    case ScriptCode.Ended:
      return { kind: 'ended', status: String(reply[1]) };
    case ScriptCode.LeaseMoved:
      return { kind: 'lease-moved' };
    default:
      throw new Error(`unexpected script reply code ${code}`);
  }
}
