/**
 * The one place script reply codes become typed results (store/codes.ts): each
 * code its refusal or verdict, and a code no script sends an error rather than
 * a refusal a caller would act on.
 */
import { lockVerdictOf, refusalOf, ScriptCode } from '../../../src/store/codes';

describe('refusalOf', () => {
  it.each([
    [ScriptCode.NotFound, { kind: 'not-found' }],
    [ScriptCode.NotThisAttempt, { kind: 'stale' }],
    [ScriptCode.NotReady, { kind: 'not-ready' }],
    [ScriptCode.LeaseMoved, { kind: 'lease-moved' }],
    [ScriptCode.NotDue, { kind: 'not-due' }],
  ])('reads code %d as %j', (code, refusal) => {
    expect(refusalOf([code])).toEqual(refusal);
    // codes arrive as Redis integers or as strings (a reply read with buffers)
    expect(refusalOf([String(code)])).toEqual(refusal);
  });

  it('reads an ended task with the status the script gave after the code', () => {
    expect(refusalOf([ScriptCode.Ended, 'completed', 'other'])).toEqual({ kind: 'ended', status: 'completed' });
  });

  it.each([0, 1, ScriptCode.LockedByOther, ScriptCode.Terminal, -11, 'x'])('throws on a code it does not know (%s)', (code) => {
    expect(() => refusalOf([code])).toThrow(/unexpected script reply code/);
  });
});

describe('lockVerdictOf', () => {
  it.each([
    [ScriptCode.NotFound, 'not-found'],
    [ScriptCode.LockedByOther, 'locked-by-other'],
    [ScriptCode.LockExpired, 'lock-expired'],
    [ScriptCode.Terminal, 'terminal'],
  ])('reads code %d as %s', (code, verdict) => {
    expect(lockVerdictOf([code])).toBe(verdict);
    expect(lockVerdictOf([String(code)])).toBe(verdict);
  });

  it.each([0, ScriptCode.NotThisAttempt, ScriptCode.Ended, ScriptCode.NotDue])('throws on a code that is no lock verdict (%d)', (code) => {
    expect(() => lockVerdictOf([code])).toThrow(/unexpected lock verdict code/);
  });
});
