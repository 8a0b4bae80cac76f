import crypto from 'node:crypto';
import { MAX_ASCII_CHARS, sha1Ascii, wordHex } from '../../../src/util/sha1-ascii';

const reference = (s: string) => crypto.createHash('sha1').update(s).digest('hex');
const hexOf = (h: Int32Array) => Array.from(h, wordHex).join('');

function randomAscii(length: number, seed: number): string {
  let x = seed;
  let s = '';
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    s += String.fromCharCode(x % 128);
  }
  return s;
}

describe('sha1Ascii', () => {
  it('gives crypto’s SHA-1 for every length it takes, the block boundaries included', () => {
    for (let n = 0; n <= MAX_ASCII_CHARS; n++) {
      for (const seed of [1, 7, 99]) {
        const s = randomAscii(n, seed * 1000 + n);
        const h = sha1Ascii(s);
        expect(h && hexOf(h)).toBe(reference(s));
      }
    }
  });

  it('gives crypto’s SHA-1 for the strings the keys hash', () => {
    for (const s of ['acme\0order-42', 'acme\0order-42\0charge-1', '\0\0', 'tenant-a\u00003f2b8c9e-1d4a-4e5b-9c7d-2a1b0c9d8e7f']) {
      expect(hexOf(sha1Ascii(s)!)).toBe(reference(s));
    }
  });

  it('declines a string with a character whose UTF-8 is not its char code, wherever it is', () => {
    expect(sha1Ascii('münchen')).toBeUndefined();
    expect(sha1Ascii(`${'a'.repeat(70)}\u0080`)).toBeUndefined(); // in the second block
    expect(sha1Ascii('😀')).toBeUndefined();
  });

  it('declines a string longer than two blocks hold', () => {
    expect(sha1Ascii('a'.repeat(MAX_ASCII_CHARS))).toBeDefined();
    expect(sha1Ascii('a'.repeat(MAX_ASCII_CHARS + 1))).toBeUndefined();
  });

  it('writes a word as the 8 hex digits of its 4 bytes, leading zeros kept', () => {
    expect(wordHex(0)).toBe('00000000');
    expect(wordHex(0x0a0b0c0d)).toBe('0a0b0c0d');
    expect(wordHex(-1)).toBe('ffffffff');
    expect(wordHex(0x80000001 | 0)).toBe('80000001');
  });
});
