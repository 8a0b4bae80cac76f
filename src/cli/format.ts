/** Pure helpers of the client commands: reading `--input`, rendering tables and JSON. */
import fs from 'node:fs';
import Table from 'cli-table3';
import { CliExit, EXIT_CONFIG } from './common';

export type Row = Record<string, unknown>;

/** `--input text` (UTF-8) or `--input @file` (the file's raw bytes). */
export function readInput(value: string | undefined): Uint8Array {
  if (value === undefined) return new Uint8Array();
  if (value.startsWith('@')) {
    const file = value.slice(1);
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw new CliExit(`--input: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, EXIT_CONFIG);
    }
  }
  return Buffer.from(value, 'utf8');
}

/** UTF-8 when the bytes are printable text, else `base64:<...>`. */
export function bytesToText(bytes: Uint8Array): string {
  const text = Buffer.from(bytes).toString('utf8');
  // eslint-disable-next-line no-control-regex
  return /^[^\u0000-\u0008\u000e-\u001f\ufffd]*$/.test(text) ? text : `base64:${Buffer.from(bytes).toString('base64')}`;
}

/** A table cell: bytes as text, dates as ISO, objects as JSON, absent as empty. */
export function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return bytesToText(value);
  if (typeof value === 'object') return JSON.stringify(value, jsonReplacer);
  return String(value);
}

/** JSON.stringify replacer: bytes as text (Buffer.toJSON runs first, so both shapes are handled), bigints as numbers. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return bytesToText(value);
  if (value && typeof value === 'object' && (value as { type?: unknown }).type === 'Buffer' && Array.isArray((value as { data?: unknown }).data)) {
    return bytesToText(Uint8Array.from((value as { data: number[] }).data));
  }
  if (typeof value === 'bigint') return Number(value);
  return value;
}

/** Colours only on a terminal; piped output stays plain text. */
function tableStyle(): { head: string[]; border: string[] } | undefined {
  return process.stdout.isTTY ? undefined : { head: [], border: [] };
}

/** A table with these column heads, styled for a terminal or plain when piped. */
export function newTable(head: string[]): InstanceType<typeof Table> {
  return new Table({ head, style: tableStyle() });
}

export interface QueueRow {
  flowType: string;
  stepType: string;
  ready: number;
  delayed: number;
  running: number;
  oldestReadyAt: Date | undefined;
}

/** The queues of `zdmatch queues` as a table. */
export function queuesTable(queues: readonly QueueRow[], now = Date.now()): string {
  const table = new Table({
    head: ['flow type', 'step type', 'ready', 'delayed', 'running', 'oldest ready', 'oldest age'],
    style: tableStyle(),
  });
  for (const q of queues) {
    const age = q.oldestReadyAt ? `${Math.max(0, Math.round((now - q.oldestReadyAt.getTime()) / 1000))}s` : '';
    table.push([q.flowType, q.stepType, q.ready, q.delayed, q.running, cell(q.oldestReadyAt), age].map((v) => cell(v)));
  }
  return table.toString();
}

/** The most of one value `zdmatch task` shows (an input or output may be 1 MB); `--json` prints all. */
const TASK_VALUE_MAX = 1000;

function shortened(text: string): string {
  return text.length <= TASK_VALUE_MAX ? text : `${text.slice(0, TASK_VALUE_MAX)}… (${text.length} characters; --json prints all)`;
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (v instanceof Uint8Array && v.length === 0);
}

/**
 * One task of `zdmatch task` as a two-column table; empty fields are left out.
 * Long values wrap within `width` (the terminal's, else 100), so that one
 * outcome or input does not widen every border line past the screen.
 */
export function taskTable(task: object, width = process.stdout.columns || 100): string {
  const rows = Object.entries(task).filter(([, v]) => !isEmpty(v)).map(([k, v]) => [k, shortened(cell(v))] as const);
  const longest = (texts: string[]) => Math.max(0, ...texts.flatMap((t) => t.split('\n')).map((l) => l.length)) + 2;
  const keyWidth = longest(rows.map(([k]) => k));
  const colWidths = [keyWidth, Math.min(longest(rows.map(([, v]) => v)), Math.max(20, width - keyWidth - 3))];
  const table = new Table({ style: tableStyle(), colWidths, wordWrap: true, wrapOnWordBoundary: false });
  for (const [k, v] of rows) table.push({ [k]: v });
  return table.toString();
}

/** A value on one line of a listing: a multi-line error (a stack) must not start lines of its own. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
