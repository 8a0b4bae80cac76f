/** How the SDKs' option checks name a value they refuse (not re-exported: internal): its type, with null and arrays told apart. */
export function kindOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}
