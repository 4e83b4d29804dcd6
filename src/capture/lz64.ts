/**
 * lz-string's decompressFromBase64 with an output bound. The library's own decoder is an LZW
 * variant whose output grows quadratically with the input: a 100 KB body decodes to hundreds
 * of millions of characters, and its `charAt(0)` on every dictionary entry flattens them all,
 * so a 260 KB body exhausts the heap and kills the process. Here the output is counted as it
 * is produced and decoding stops past the limit; dictionary entries stay cons strings (their
 * first character is kept on the side), so memory follows the output, not its square.
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';
// Character code → 6-bit value; anything else counts as 0, as in lz-string.
const VALUES = new Uint8Array(128);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;
const valueAt = (input: string, index: number): number => {
  const code = input.charCodeAt(index);
  return code < 128 ? VALUES[code] : 0;
};

export class Lz64TooLargeError extends Error {}

/** The decompressed text; null for input lz-string itself would reject (it returns "" or null). */
export function decompressLz64(input: string, maxChars: number): string | null {
  if (input === '') return null;
  const length = input.length;
  // Bits are read most significant first from each 6-bit character.
  let index = 1;
  let current = valueAt(input, 0);
  let position = 32;
  const read = (bitCount: number): number => {
    let bits = 0;
    // Codes stay far below 2^31: the output bound stops the dictionary long before.
    for (let power = 1, end = 1 << bitCount; power !== end; power <<= 1) {
      const bit = current & position;
      position >>= 1;
      if (position === 0) {
        position = 32;
        current = valueAt(input, index++);
      }
      if (bit) bits |= power;
    }
    return bits;
  };

  const dictionary: string[] = [];
  const firsts: string[] = [];
  let dictSize = 4;
  let numBits = 3;
  let enlargeIn = 4;

  const head = read(2);
  if (head === 2) return '';
  if (head === 3) return null;
  let w = String.fromCharCode(read(head === 0 ? 8 : 16));
  let wFirst = w;
  dictionary[3] = w;
  firsts[3] = w;
  const output: string[] = [w];
  let produced = 1;

  for (;;) {
    if (index > length) return null;
    let code = read(numBits);
    if (code === 2) return output.join('');
    if (code === 0 || code === 1) {
      const literal = String.fromCharCode(read(code === 0 ? 8 : 16));
      dictionary[dictSize] = literal;
      firsts[dictSize] = literal;
      code = dictSize++;
      if (--enlargeIn === 0) enlargeIn = 2 ** numBits++;
    }
    let entry: string;
    let entryFirst: string;
    if (code < dictSize && dictionary[code] !== undefined) {
      entry = dictionary[code];
      entryFirst = firsts[code];
    } else if (code === dictSize) {
      entry = w + wFirst;
      entryFirst = wFirst;
    } else {
      return null;
    }
    produced += entry.length;
    if (produced > maxChars) throw new Lz64TooLargeError(`lz64 payload decodes to more than ${maxChars} characters`);
    output.push(entry);
    dictionary[dictSize] = w + entryFirst;
    firsts[dictSize] = wFirst;
    dictSize++;
    w = entry;
    wFirst = entryFirst;
    if (--enlargeIn === 0) enlargeIn = 2 ** numBits++;
  }
}
