/**
 * Bearer tokens (DESIGN §9 `auth.*`, docs/security.md): one file per kind
 * (worker tokens, client tokens), each entry bound to tenants and, for client
 * tokens, optionally to the operator scope.
 *
 *   tokens:
 *     - name: acme-workers          # shown in logs, never the token
 *       sha256: 9f86d081884c7d65…   # hex sha256 of the token (preferred), or
 *       # token: "s3cret"           # the token itself
 *       tenants: [acme]             # or ["*"] for every tenant
 *       operator: false             # client tokens only: OperatorService, DescribeCluster
 *
 * The file is re-read when it changes (util/file-watch.ts: fs.watch on its
 * folder, so a rename over it is seen, plus a periodic stat as a fallback). A file that cannot be
 * read or does not parse fails CLOSED: every token of that kind is refused
 * until the file is fixed, and each failure logs an ERROR.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import YAML, { YAMLError } from 'yaml';
import { FileWatch } from '../util/file-watch';
import type { Logger } from '../util/logger';

export type TokenKind = 'worker' | 'client';

export interface Principal {
  /** The entry's name (or "token #i"); for logs. */
  readonly name: string;
  readonly kind: TokenKind | 'anonymous';
  /** Every tenant ("*" in the file, or auth off). */
  readonly allTenants: boolean;
  readonly tenants: ReadonlySet<string>;
  readonly operator: boolean;
}

/** The principal of every call when auth is off. */
export const UNRESTRICTED: Principal = { name: 'auth-off', kind: 'anonymous', allTenants: true, tenants: new Set(), operator: true };

export function covers(p: Principal, tenant: string): boolean {
  return p.allTenants || p.tenants.has(tenant);
}

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
/** The longest bearer token a call can present (auth.ts reads at most this many characters). */
export const MAX_TOKEN_CHARS = 4096;
const TENANT = /^(\*|[A-Za-z0-9_][A-Za-z0-9_.\-]*)$/;

/**
 * The file's YAML. A warning (a tag or directive YAML does not know, such as `token: !vault …`) refuses the
 * file as an error does: YAML.parse would print it to stderr quoting the file's line, which may hold a
 * plain token, and take the tagged value literally, granting a token nobody meant to write down.
 */
function parseYaml(text: string): unknown {
  const doc = YAML.parseDocument(text);
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw problem;
  return doc.toJS();
}

/** Parses a tokens file; throws an Error naming the entry and field. */
export function parseTokensFile(text: string, kind: TokenKind): Map<string, Principal> {
  const doc = parseYaml(text);
  if (!doc || typeof doc !== 'object' || !Array.isArray((doc as { tokens?: unknown }).tokens)) {
    throw new Error('must be a YAML object with a list "tokens"');
  }
  const out = new Map<string, Principal>();
  (doc as { tokens: unknown[] }).tokens.forEach((raw, i) => {
    const at = `tokens[${i}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${at}: must be an object`);
    const e = raw as Record<string, unknown>;
    for (const k of Object.keys(e)) {
      if (!['name', 'token', 'sha256', 'tenants', 'operator'].includes(k)) throw new Error(`${at}.${k}: is not a known field`);
    }
    let digest: string;
    if (typeof e.sha256 === 'string' && e.token === undefined) {
      if (!/^[0-9a-fA-F]{64}$/.test(e.sha256)) throw new Error(`${at}.sha256: must be 64 hex digits`);
      digest = e.sha256.toLowerCase();
    } else if (typeof e.token === 'string' && e.sha256 === undefined) {
      // A token travels as `authorization: Bearer <token>`, which carries 1 to 4096 visible ASCII characters
      // (auth.ts): any other token could never authenticate, so the file is wrong, not the callers.
      if (e.token.length < 16) throw new Error(`${at}.token: must be at least 16 characters`);
      if (e.token.length > MAX_TOKEN_CHARS) throw new Error(`${at}.token: must be at most ${MAX_TOKEN_CHARS} characters`);
      if (!/^[\x21-\x7e]+$/.test(e.token)) throw new Error(`${at}.token: must be visible ASCII characters only (no spaces)`);
      digest = sha256(e.token);
    } else {
      throw new Error(`${at}: needs exactly one of "token" or "sha256"`);
    }
    const tenants = e.tenants ?? [];
    if (!Array.isArray(tenants) || tenants.some((t) => typeof t !== 'string' || !TENANT.test(t))) {
      throw new Error(`${at}.tenants: must be a list of tenant names (or "*")`);
    }
    const operator = e.operator ?? false;
    if (typeof operator !== 'boolean') throw new Error(`${at}.operator: must be true or false`);
    if (operator && kind === 'worker') throw new Error(`${at}.operator: only client tokens carry the operator scope`);
    if (tenants.length === 0 && !operator) throw new Error(`${at}.tenants: must name at least one tenant (or set operator: true)`);
    if (out.has(digest)) throw new Error(`${at}: the same token appears twice`);
    // The name is what logs and metrics call the caller: one that is not text is a mistake in the file.
    if (e.name !== undefined && typeof e.name !== 'string') throw new Error(`${at}.name: must be a string`);
    const name = typeof e.name === 'string' && e.name ? e.name.slice(0, 128) : `token #${i}`;
    out.set(digest, {
      name, kind, allTenants: tenants.includes('*'), tenants: new Set(tenants.filter((t) => t !== '*')), operator,
    });
  });
  return out;
}

/**
 * Why a load failed, for the log: a system error's code (ENOENT), a YAML error's code and position (its
 * message quotes the file, which may hold plain tokens), else parseTokensFile's message (entry and field).
 */
function reasonOf(err: unknown): string {
  if (err instanceof YAMLError) {
    const at = err.linePos?.[0];
    return at ? `${err.code} at line ${at.line}, column ${at.col}` : err.code;
  }
  const e = err as NodeJS.ErrnoException;
  return e.code ?? e.message;
}

/** One kind's tokens, kept current with its file. */
export class TokenFile {
  /** undefined = failed closed (or not configured). */
  private tokens: Map<string, Principal> | undefined;
  private readonly watch: FileWatch;
  /** Loads so far (tests wait on it). */
  generation = 0;

  constructor(readonly kind: TokenKind, readonly file: string, private readonly log: Logger, pollMs: number) {
    this.watch = new FileWatch([file], pollMs, () => this.reload());
  }

  /** First load and watchers; a bad file at boot still boots (fail closed) but logs an ERROR. */
  start(): void {
    if (!this.file) {
      // An ERROR, as a broken file is: this node serves no caller of this kind (docs/security.md).
      this.log.error({ kind: this.kind }, `auth: no auth.${this.kind}TokensFile configured; every ${this.kind} token is refused`);
      return;
    }
    this.reload();
    this.watch.start((err) => {
      this.log.warn({ kind: this.kind, err: err.message }, 'auth: cannot watch the tokens file; relying on the periodic check');
    });
  }

  stop(): void {
    this.watch.stop();
  }

  lookup(token: string): Principal | undefined {
    return this.tokens?.get(sha256(token));
  }

  get healthy(): boolean {
    return this.tokens !== undefined;
  }

  /** Reads and parses the file now; on any failure every token of this kind is refused. */
  reload(): void {
    this.watch.reading();
    this.generation++;
    try {
      const next = parseTokensFile(fs.readFileSync(this.file, 'utf8'), this.kind);
      const was = this.tokens;
      this.tokens = next;
      this.log.info({ kind: this.kind, file: this.file, tokens: next.size }, was ? 'auth: tokens file reloaded' : 'auth: tokens file loaded');
    } catch (err) {
      this.tokens = undefined;
      this.log.error(
        { kind: this.kind, file: this.file, err: reasonOf(err) },
        `auth: the ${this.kind} tokens file is unreadable or invalid; every ${this.kind} token is refused until it is fixed`,
      );
    }
  }
}
