/**
 * SHA-1 of an ASCII string, computed in JavaScript: the two hashes of every
 * enqueued Step (its partition and its task id, store/keys.ts). Node's own
 * crypto.hash costs ≈ 1.5-2 µs a call for these 20-80 byte strings, nearly all
 * of it the call into C++ and the digest object around it; this loop takes
 * ≈ 0.35 µs for one 64-byte block and ≈ 0.85 µs for two. The npm SHA-1
 * implementations measured no faster than crypto.hash for such short inputs
 * (docs/benchmarks.md), so this covers the one case the hot path has and
 * leaves every other string to crypto.
 *
 * Returns the five state words of the digest (big-endian words: word 0 is
 * bytes 0-3), in a buffer reused by the next call, or undefined when `s` holds
 * a character above U+007F (its UTF-8 bytes differ from its char codes) or is
 * longer than MAX_ASCII_CHARS: the caller then uses crypto.
 */

/** Two blocks. A third costs as much as crypto.hash's whole call: longer strings go there. */
export const MAX_ASCII_CHARS = 119;

const W = new Int32Array(80);
const H = new Int32Array(5);

export function sha1Ascii(s: string): Int32Array | undefined {
  const n = s.length;
  if (n > MAX_ASCII_CHARS) return undefined;
  // Padding: 0x80, zeros, then the bit length in the last 8 bytes of the last block.
  const blocks = ((n + 8) >> 6) + 1;
  let h0 = 0x67452301;
  let h1 = 0xefcdab89 | 0;
  let h2 = 0x98badcfe | 0;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0 | 0;
  for (let block = 0; block < blocks; block++) {
    const base = block << 6;
    W.fill(0, 0, 16);
    const end = Math.min(n, base + 64);
    let seen = 0;
    for (let at = base; at < end; at++) {
      const c = s.charCodeAt(at);
      seen |= c;
      W[(at - base) >> 2]! |= c << (24 - ((at & 3) << 3));
    }
    if (seen > 0x7f) return undefined;
    if (n >= base && n < base + 64) W[(n - base) >> 2]! |= 0x80 << (24 - ((n & 3) << 3));
    // n < 2^29, so the length's upper word is 0.
    if (block === blocks - 1) W[15] = n * 8;
    for (let t = 16; t < 80; t++) {
      const x = W[t - 3]! ^ W[t - 8]! ^ W[t - 14]! ^ W[t - 16]!;
      W[t] = (x << 1) | (x >>> 31);
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    // The four 20-round stages as four loops: no branch inside a round.
    let t = 0;
    for (; t < 20; t++) {
      const tmp = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + 0x5a827999 + W[t]!) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = tmp;
    }
    for (; t < 40; t++) {
      const tmp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0x6ed9eba1 + W[t]!) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = tmp;
    }
    for (; t < 60; t++) {
      const tmp = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + (0x8f1bbcdc | 0) + W[t]!) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = tmp;
    }
    for (; t < 80; t++) {
      const tmp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + (0xca62c1d6 | 0) + W[t]!) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = tmp;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  H[0] = h0;
  H[1] = h1;
  H[2] = h2;
  H[3] = h3;
  H[4] = h4;
  return H;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A state word as 8 lowercase hex digits, as Buffer#toString('hex') writes its 4 bytes. */
export function wordHex(w: number): string {
  return HEX[w >>> 24]! + HEX[(w >>> 16) & 0xff]! + HEX[(w >>> 8) & 0xff]! + HEX[w & 0xff]!;
}
