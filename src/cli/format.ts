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

/** The width listings fit: the terminal's; piped output is not wrapped, so each row stays one line for grep and awk. */
export function outputWidth(): number {
  return process.stdout.isTTY ? process.stdout.columns || 100 : Infinity;
}

/** A column is never narrower than this (its head's longest word, when longer): ids wrap, they are never cut. */
const MIN_COLUMN = 8;

/**
 * A listing as a table no wider than `width`: when the columns' natural widths do
 * not fit, the widest give way first, down to MIN_COLUMN, and their values wrap
 * (node ids, addresses and type names are never cut short). Heads wrap between words.
 */
export function fittedTable(head: readonly string[], rows: readonly (readonly string[])[], width = outputWidth()): string {
  const longestLine = (t: string) => Math.max(0, ...t.split('\n').map((l) => l.length));
  // Content plus cli-table3's one space of padding each side.
  const widths = head.map((h, i) => Math.max(longestLine(h), ...rows.map((r) => longestLine(r[i] ?? ''))) + 2);
  const floors = head.map((h, i) => Math.min(widths[i]!, Math.max(MIN_COLUMN, ...h.split(' ').map((w) => w.length + 2))));
  let total = widths.reduce((a, b) => a + b, 0) + head.length + 1;
  let narrowed = false;
  while (total > width) {
    let widest = -1;
    widths.forEach((w, i) => {
      if (w > floors[i]! && (widest < 0 || w > widths[widest]!)) widest = i;
    });
    if (widest < 0) break; // every column at its floor: wider than the screen, but nothing is cut
    widths[widest]!--;
    total--;
    narrowed = true;
  }
  const table = new Table({
    head: narrowed ? head.map((h, i) => wrapWords(h, widths[i]! - 2)) : [...head],
    style: tableStyle(),
    ...(narrowed ? { colWidths: widths, wordWrap: true, wrapOnWordBoundary: false } : {}),
  });
  for (const r of rows) table.push([...r]);
  return table.toString();
}

/** A head's words on lines of at most `width` characters (a word longer than that keeps its own line). */
function wrapWords(text: string, width: number): string {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last]!.length + 1 + word.length <= width) lines[last] += ` ${word}`;
    else lines.push(word);
  }
  return lines.join('\n');
}

export interface QueueRow {
  flowType: string;
  stepType: string;
  ready: number;
  delayed: number;
  running: number;
  oldestReadyAt: Date | undefined;
}

/** The queues of `zdmatch queues` as a table no wider than `width`. */
export function queuesTable(queues: readonly QueueRow[], now = Date.now(), width = outputWidth()): string {
  const rows = queues.map((q) => {
    const age = q.oldestReadyAt ? `${Math.max(0, Math.round((now - q.oldestReadyAt.getTime()) / 1000))}s` : '';
    return [q.flowType, q.stepType, q.ready, q.delayed, q.running, cell(q.oldestReadyAt), age].map((v) => cell(v));
  });
  return fittedTable(['flow type', 'step type', 'ready', 'delayed', 'running', 'oldest ready', 'oldest age'], rows, width);
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
