/** Plain camelCase types of the fetch SDK. */

/** A queue of Step tasks a fetch worker serves. */
export interface Topic {
  tenant: string;
  flowType: string;
  stepType: string;
}

export interface FetchOptions {
  topics: Topic[];
  /** At most this many tasks (a whole number); 0/omitted = the server's fetch.maxTasks; over fetch.maxMaxTasks is rejected. */
  maxTasks?: number;
  /** 0/omitted = the server's fetch.lockDuration; over fetch.maxLockDuration is rejected. */
  lockDurationMs?: number;
  /** Long-poll wait in ms; 0/omitted = the server's fetch.wait; over fetch.maxWait is rejected (past 2^31 - 1, by the SDK). */
  waitMs?: number;
}

export interface LockedTask {
  taskId: string;
  topic: Topic;
  flowId: string;
  stepExecutionId: string;
  input: Buffer;
  lockUntil: Date;
  /** Fetch retries left as set by the last Fail (0 = unset). */
  retries: number;
  /** The step attempt; fetch failures never change it. */
  attempt: number;
}

export interface FailOptions {
  message?: string;
  type?: string;
  /** Retries left after this failure, a whole number from 0 to 2^31 - 1; 0 makes the task terminal. Required. */
  retries: number;
  /** The task is fetchable again after this long. */
  retryTimeoutMs?: number;
}

export interface TerminalTask {
  taskId: string;
  partition: number;
  topic: Topic;
  flowId: string;
  stepExecutionId: string;
  attempt: number;
  reason: string;
  terminalAt: Date | undefined;
  lastError: { message: string; type: string } | undefined;
  lockExpiries: number;
}

/** What TerminalTasksClient.list answers. */
export interface TerminalTaskList {
  /** The oldest first. */
  tasks: TerminalTask[];
  /**
   * True when some partition held more terminal entries than one listing reads
   * (20 000, all tenants' together): matching tasks may be missing. Retry or
   * abandon these, or narrow the filters, and list again.
   */
  incomplete: boolean;
}

export interface FetchCallOptions {
  signal?: AbortSignal;
  /**
   * Overrides the client's defaultTimeoutMs (long polls add their wait to it); past it the call rejects with
   * ZdDeadlineExceededError. In whole ms, > 0 and at most 2^31 - 1 (MAX_TIMER_MS), else a TypeError naming it.
   */
  timeoutMs?: number;
}
