/**
 * Tokenizer for HogQL expressions (ClickHouse-like): numbers, single-quoted strings with
 * backslash escapes, bare / backtick / double-quoted identifiers, operators, and `--` or
 * `/* *\/` comments (skipped).
 */
import { errorAt } from './errors.js';

export type TokenKind = 'number' | 'string' | 'identifier' | 'operator' | 'placeholder' | 'end';

export interface Token {
  kind: TokenKind;
  /** Decoded text: the string's value, the identifier's name, the operator itself. */
  text: string;
  start: number;
  end: number;
  /** Identifiers written in backticks or double quotes: never keywords. */
  quoted?: boolean;
}

// Longest first so `<=` wins over `<`.
const OPERATORS = ['->', '==', '!=', '<>', '<=', '>=', '(', ')', ',', '.', '[', ']', '*', '+', '-', '/', '%', '=', '<', '>'];

const SIMPLE_ESCAPES: Record<string, string> = {
  b: '\b',
  f: '\f',
  r: '\r',
  n: '\n',
  t: '\t',
  '0': '\0',
  a: '\x07',
  v: '\v',
};

const isDigit = (c: string) => c >= '0' && c <= '9';
const isIdentStart = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c === '$';
const isIdentPart = (c: string) => isIdentStart(c) || isDigit(c);

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (true) {
    pos = skipSpaceAndComments(source, pos);
    if (pos >= source.length) break;
    const c = source[pos];
    if (isDigit(c)) {
      const end = scanNumber(source, pos);
      tokens.push({ kind: 'number', text: source.slice(pos, end), start: pos, end });
      pos = end;
    } else if (isIdentStart(c)) {
      let end = pos + 1;
      while (end < source.length && isIdentPart(source[end])) end++;
      tokens.push({ kind: 'identifier', text: source.slice(pos, end), start: pos, end });
      pos = end;
    } else if (c === "'") {
      const [text, end] = scanQuoted(source, pos, "'", 'string');
      tokens.push({ kind: 'string', text, start: pos, end });
      pos = end;
    } else if (c === '{') {
      // `{name}` / `{a.b}`: a placeholder; only the HogQLQuery compiler fills them in.
      const match = /^\{\s*([A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*)\s*\}/.exec(source.slice(pos, pos + 300));
      if (!match) throw errorAt("Unexpected character '{'", pos);
      tokens.push({ kind: 'placeholder', text: match[1], start: pos, end: pos + match[0].length });
      pos += match[0].length;
    } else if (c === '`' || c === '"') {
      const [text, end] = scanQuoted(source, pos, c, 'identifier');
      tokens.push({ kind: 'identifier', text, start: pos, end, quoted: true });
      pos = end;
    } else {
      const op = OPERATORS.find((candidate) => source.startsWith(candidate, pos));
      if (!op) throw errorAt(`Unexpected character ${describeChar(String.fromCodePoint(source.codePointAt(pos)!))}`, pos);
      tokens.push({ kind: 'operator', text: op, start: pos, end: pos + op.length });
      pos += op.length;
    }
  }
  tokens.push({ kind: 'end', text: '', start: source.length, end: source.length });
  return tokens;
}

function skipSpaceAndComments(source: string, start: number): number {
  let pos = start;
  while (pos < source.length) {
    const c = source[pos];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v') {
      pos++;
    } else if (source.startsWith('--', pos)) {
      const newline = source.indexOf('\n', pos);
      pos = newline === -1 ? source.length : newline + 1;
    } else if (source.startsWith('/*', pos)) {
      const close = source.indexOf('*/', pos + 2);
      if (close === -1) throw errorAt('Unterminated comment', pos);
      pos = close + 2;
    } else {
      break;
    }
  }
  return pos;
}

function scanNumber(source: string, start: number): number {
  let pos = start;
  while (pos < source.length && isDigit(source[pos])) pos++;
  // A fraction needs a digit after the dot, so `1.` stays an integer followed by `.`.
  if (source[pos] === '.' && isDigit(source[pos + 1] ?? '')) {
    pos++;
    while (pos < source.length && isDigit(source[pos])) pos++;
  }
  if (source[pos] === 'e' || source[pos] === 'E') {
    let next = pos + 1;
    if (source[next] === '+' || source[next] === '-') next++;
    if (isDigit(source[next] ?? '')) {
      pos = next;
      while (pos < source.length && isDigit(source[pos])) pos++;
    }
  }
  if (pos < source.length && isIdentPart(source[pos])) {
    throw errorAt(`Invalid number ${JSON.stringify(source.slice(start, pos + 1))}`, start);
  }
  return pos;
}

/**
 * Reads a quoted run starting at `start` (the opening quote). A doubled quote stands for the
 * quote itself; `\xHH` and the usual letter escapes decode; any other `\c` becomes `c`, as in
 * ClickHouse.
 */
function scanQuoted(source: string, start: number, quote: string, what: string): [string, number] {
  let out = '';
  let pos = start + 1;
  while (pos < source.length) {
    const c = source[pos];
    if (c === quote) {
      if (source[pos + 1] === quote) {
        out += quote;
        pos += 2;
        continue;
      }
      return [out, pos + 1];
    }
    if (c === '\\') {
      const next = source[pos + 1];
      if (next === undefined) break;
      if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(source.slice(pos + 2, pos + 4))) {
        out += String.fromCharCode(parseInt(source.slice(pos + 2, pos + 4), 16));
        pos += 4;
        continue;
      }
      out += SIMPLE_ESCAPES[next] ?? next;
      pos += 2;
      continue;
    }
    out += c;
    pos++;
  }
  throw errorAt(`Unterminated ${what} starting`, start);
}

function describeChar(c: string): string {
  const code = c.codePointAt(0)!;
  return code < 0x20 || code === 0x7f ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `'${c}'`;
}
