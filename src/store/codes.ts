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
  LockedByOther = -6,
  LockExpired = -7,
  Terminal = -8,
  NotTerminal = -9,
  /** An owner's reason to fail an attempt no longer holds (failTask-3.lua ARGV[12]). */
  NotDue = -10,
}

/**
 * Why a fetch worker's guarded mutation (Complete, Fail, ExtendLock, Unlock)
 * matched nothing: read from lock state only, in the same script as the guard
 * (store/lua/includes/verdict.lua `verdictOf`). Zero rows is never success.
 */
export type LockVerdict = 'not-found' | 'locked-by-other' | 'lock-expired' | 'terminal';

export function lockVerdictOf(reply: unknown[]): LockVerdict {
  const code = Number(reply[0]);
  switch (code) {
    case ScriptCode.NotFound:
      return 'not-found';
    case ScriptCode.LockedByOther:
      return 'locked-by-other';
    case ScriptCode.LockExpired:
      return 'lock-expired';
    case ScriptCode.Terminal:
      return 'terminal';
    default:
      throw new Error(`unexpected lock verdict code ${code}`);
  }
}

/** Why a guarded mutation matched nothing. */
export type Refusal =
  | { kind: 'not-found' }
  | { kind: 'stale' }
  | { kind: 'not-ready' }
  | { kind: 'ended'; status: string }
  | { kind: 'lease-moved' }
  /**
   * Only for an owner's failure (TaskStore.fail with a FailCondition): the attempt is
   * not due for it any more. Its deadline moved (a heartbeat), or it is another
   * attempt than the one the owner saw (on a live node, or not yet past its deadline).
   */
  | { kind: 'not-due' };

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
    case ScriptCode.NotDue:
      return { kind: 'not-due' };
    default:
      throw new Error(`unexpected script reply code ${code}`);
  }
}
