/** Every code of the error catalog is documented in docs/errors.md with its gRPC and HTTP status. */
import fs from 'node:fs';
import path from 'node:path';
import { Status } from 'nice-grpc';
import { ERROR_CATALOG, type ErrorCode } from '../../src/errors';

interface DocRow {
  code: string;
  grpc: string;
  http: number;
}

function docRows(): Map<string, DocRow> {
  const text = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
  const rows = new Map<string, DocRow>();
  for (const line of text.split('\n')) {
    // | `ZD_X` | `NOT_FOUND` (5) | 404 | ... |
    const m = /^\|\s*`(ZD_[A-Z_]+)`\s*\|\s*`([A-Z_]+)`\s*\((\d+)\)\s*\|\s*(\d{3})\s*\|/.exec(line);
    if (!m) continue;
    if (rows.has(m[1]!)) throw new Error(`${m[1]} is documented twice`);
    if (Status[m[2] as keyof typeof Status] !== Number(m[3])) throw new Error(`${m[1]}: ${m[2]} is not gRPC status ${m[3]}`);
    rows.set(m[1]!, { code: m[1]!, grpc: m[2]!, http: Number(m[4]) });
  }
  return rows;
}

describe('docs/errors.md', () => {
  const rows = docRows();
  const codes = Object.keys(ERROR_CATALOG) as ErrorCode[];

  it.each(codes)('documents %s with its statuses', (code) => {
    const spec = ERROR_CATALOG[code];
    expect(rows.get(code)).toEqual({ code, grpc: Status[spec.grpc], http: spec.http });
  });

  it('documents no code the catalog lacks', () => {
    expect([...rows.keys()].filter((c) => !(c in ERROR_CATALOG))).toEqual([]);
  });
});

describe('the fetch surface verdicts', () => {
  // DESIGN §7: NOT_FOUND, LOCKED_BY_OTHER, LOCK_EXPIRED, TERMINAL, each with its own gRPC code and HTTP status
  const verdicts = ['ZD_TASK_NOT_FOUND', 'ZD_LOCKED_BY_OTHER', 'ZD_LOCK_EXPIRED', 'ZD_TERMINAL'] as const;

  it('have a gRPC status and an HTTP status each', () => {
    expect(new Set(verdicts.map((c) => ERROR_CATALOG[c].grpc)).size).toBe(verdicts.length);
    expect(new Set(verdicts.map((c) => ERROR_CATALOG[c].http)).size).toBe(verdicts.length);
  });

  it('use no status a gRPC client retries by itself', () => {
    for (const c of verdicts) expect([Status.UNAVAILABLE, Status.DEADLINE_EXCEEDED, Status.RESOURCE_EXHAUSTED]).not.toContain(ERROR_CATALOG[c].grpc);
  });
});
