/**
 * Conservative syntax check for RE2 patterns (DuckDB's regexp engine), so a bad `regex`
 * filter is a 400 instead of a query error. It accepts a subset of RE2 — anything it is
 * unsure about is refused — and estimates the compiled size, since RE2 also refuses
 * patterns that compile too large (`\pL{1000}`).
 */
export const MAX_PATTERN_LENGTH = 5_000;

/** A pattern matching `text` literally (RE2 and ClickHouse's re2 share the syntax). */
export const escapeRegex = (text: string) => text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
const MAX_REPEAT = 1_000;
const MAX_GROUP_DEPTH = 100;
// RE2 in DuckDB refuses ~700k "literal units"; stay far below.
const MAX_COST = 100_000;

const POSIX_CLASSES = new Set([
  'alnum', 'alpha', 'ascii', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'word', 'xdigit',
]);
const UNICODE_CATEGORIES = new Set([
  'C', 'Cc', 'Cf', 'Co', 'Cs', 'L', 'Ll', 'Lm', 'Lo', 'Lt', 'Lu', 'M', 'Mc', 'Me', 'Mn', 'N', 'Nd', 'Nl', 'No',
  'P', 'Pc', 'Pd', 'Pe', 'Pf', 'Pi', 'Po', 'Ps', 'S', 'Sc', 'Sk', 'Sm', 'So', 'Z', 'Zl', 'Zp', 'Zs', 'Any',
  'Arabic', 'Armenian', 'Bengali', 'Common', 'Cyrillic', 'Devanagari', 'Georgian', 'Greek', 'Han', 'Hangul',
  'Hebrew', 'Hiragana', 'Inherited', 'Katakana', 'Latin', 'Thai',
]);
const UNICODE_LETTERS = new Set(['C', 'L', 'M', 'N', 'P', 'S', 'Z']);

// Estimated compiled size of each construct, from measurements against DuckDB's RE2.
const COST = { literal: 1, nonAscii: 10, any: 20, perlClass: 4, negatedPerlClass: 30, unicode: 2_000, posix: 5, negation: 30 };

class RegexSyntaxError extends Error {}

interface Node {
  cost: number;
  /** Product of nested counted repetitions; RE2 caps it at 1000. */
  product: number;
}

/** Null when DuckDB's RE2 will compile the pattern; otherwise the reason it is refused. */
export function re2SyntaxError(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return `pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  try {
    new Checker(pattern).check();
    return null;
  } catch (error) {
    if (error instanceof RegexSyntaxError) return error.message;
    throw error;
  }
}

class Checker {
  private readonly chars: string[];
  private pos = 0;
  private depth = 0;
  private caseFolding = false;
  private readonly names = new Set<string>();

  constructor(pattern: string) {
    this.chars = Array.from(pattern);
    if (this.chars.some((c) => {
      const code = c.codePointAt(0)!;
      return code >= 0xd800 && code <= 0xdfff;
    })) {
      this.fail('invalid UTF-8 (unpaired surrogate)');
    }
  }

  check(): void {
    const node = this.alternation();
    if (this.pos < this.chars.length) this.fail('unexpected )');
    const cost = node.cost * (this.caseFolding ? 2 : 1);
    if (cost > MAX_COST) this.fail('pattern too large');
  }

  private alternation(): Node {
    const node = this.concatenation();
    while (this.peek() === '|') {
      this.pos++;
      const next = this.concatenation();
      node.cost += next.cost + 1;
      node.product = Math.max(node.product, next.product);
    }
    return node;
  }

  private concatenation(): Node {
    const node: Node = { cost: 0, product: 1 };
    while (this.pos < this.chars.length && this.peek() !== '|' && this.peek() !== ')') {
      if (this.atQuantifier()) this.fail(`missing argument to repetition operator: ${this.peek()}`);
      let atom = this.atom();
      if (!atom) {
        // A flag group like `(?i)` matches nothing and cannot be repeated.
        if (this.atQuantifier()) this.fail('missing argument to repetition operator');
        continue;
      }
      if (this.atQuantifier()) {
        atom = this.quantified(atom);
        if (this.peek() === '?') this.pos++; // non-greedy marker
        if (this.atQuantifier()) this.fail('bad repetition operator');
      }
      node.cost += atom.cost;
      node.product = Math.max(node.product, atom.product);
    }
    return node;
  }

  private atom(): Node | null {
    const c = this.chars[this.pos++];
    switch (c) {
      case '(':
        return this.group();
      case '[':
        return this.characterClass();
      case '\\':
        return this.escape();
      case '.':
        return { cost: COST.any, product: 1 };
      default:
        return { cost: charCost(c), product: 1 };
    }
  }

  private group(): Node | null {
    if (++this.depth > MAX_GROUP_DEPTH) this.fail('nesting too deep');
    try {
      if (this.peek() === '?') {
        this.pos++;
        if (this.peek() === 'P' && this.chars[this.pos + 1] === '<') {
          this.pos += 2;
          this.groupName();
        } else if (this.peek() === ':') {
          this.pos++;
        } else if (this.flags()) {
          return null;
        }
      }
      const inner = this.alternation();
      if (this.peek() !== ')') this.fail('missing )');
      this.pos++;
      return { cost: inner.cost + 2, product: inner.product };
    } finally {
      this.depth--;
    }
  }

  private groupName(): void {
    let name = '';
    while (this.pos < this.chars.length && this.peek() !== '>') name += this.chars[this.pos++];
    if (this.peek() !== '>' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) this.fail('invalid named capture group');
    if (this.names.has(name)) this.fail(`duplicate capture group name: ${name}`);
    this.names.add(name);
    this.pos++;
  }

  /** `(?flags)` or `(?flags:`; returns true for the former (no atom follows). */
  private flags(): boolean {
    let text = '';
    while (this.pos < this.chars.length && /[imsU-]/.test(this.peek())) text += this.chars[this.pos++];
    const end = this.peek();
    if ((end !== ')' && end !== ':') || !/^[imsU]*(-[imsU]+)?$/.test(text) || text === '') {
      this.fail('invalid or unsupported perl operator');
    }
    if (/^[msU]*i/.test(text)) this.caseFolding = true;
    this.pos++;
    return end === ')';
  }

  private escape(): Node {
    const c = this.chars[this.pos++];
    if (c === undefined) this.fail('trailing \\');
    if ('dsw'.includes(c)) return { cost: COST.perlClass, product: 1 };
    if ('DSW'.includes(c)) return { cost: COST.negatedPerlClass, product: 1 };
    if ('bBAz'.includes(c)) return { cost: 1, product: 1 };
    if (c === 'p' || c === 'P') {
      this.unicodeClass();
      return { cost: COST.unicode, product: 1 };
    }
    if (c === 'Q') return this.quoted();
    this.pos--;
    return { cost: charCost(String.fromCodePoint(this.escapedChar())), product: 1 };
  }

  /** `\Q...\E`: literal text up to `\E` or the end. */
  private quoted(): Node {
    let cost = 0;
    while (this.pos < this.chars.length) {
      if (this.peek() === '\\') {
        if (this.chars[this.pos + 1] !== 'E') this.fail('unsupported escape inside \\Q...\\E');
        this.pos += 2;
        break;
      }
      cost += charCost(this.chars[this.pos++]);
    }
    if (cost === 0) this.fail('empty \\Q...\\E');
    return { cost, product: 1 };
  }

  /** `\pL`, `\p{Greek}`, `\p{^L}` (after the p / P). */
  private unicodeClass(): void {
    if (this.peek() !== '{') {
      const letter = this.chars[this.pos++];
      if (letter === undefined || !UNICODE_LETTERS.has(letter)) this.fail('invalid character class range');
      return;
    }
    this.pos++;
    let name = '';
    while (this.pos < this.chars.length && this.peek() !== '}') name += this.chars[this.pos++];
    if (this.peek() !== '}') this.fail('missing } in \\p{...}');
    this.pos++;
    if (!UNICODE_CATEGORIES.has(name.startsWith('^') ? name.slice(1) : name)) this.fail(`invalid character class range: \\p{${name}}`);
  }

  /**
   * A single-character escape (cursor on the character after the backslash): hex, octal,
   * control letters or escaped punctuation. Returns the code point.
   */
  private escapedChar(): number {
    const c = this.chars[this.pos++];
    if (c === undefined) this.fail('trailing \\');
    const controls: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };
    if (Object.hasOwn(controls, c)) return controls[c];
    if (c === 'x') return this.hexEscape();
    if (c >= '0' && c <= '7') {
      // `\1`-`\7` alone would be a backreference, which RE2 refuses.
      let digits = c;
      while (digits.length < 3 && /[0-7]/.test(this.peek() ?? '')) digits += this.chars[this.pos++];
      if (c !== '0' && digits.length === 1) this.fail(`invalid escape sequence: \\${c}`);
      return parseInt(digits, 8);
    }
    const code = c.codePointAt(0)!;
    if (code < 0x80 && !/[A-Za-z0-9]/.test(c)) return code;
    this.fail(`invalid escape sequence: \\${c}`);
  }

  private hexEscape(): number {
    let digits = '';
    if (this.peek() === '{') {
      this.pos++;
      while (this.pos < this.chars.length && this.peek() !== '}') digits += this.chars[this.pos++];
      if (this.peek() !== '}') this.fail('invalid escape sequence: \\x{');
      this.pos++;
      if (!/^[0-9A-Fa-f]{1,6}$/.test(digits) || parseInt(digits, 16) > 0x10ffff) this.fail('invalid escape sequence: \\x');
    } else {
      digits = (this.chars[this.pos] ?? '') + (this.chars[this.pos + 1] ?? '');
      if (!/^[0-9A-Fa-f]{2}$/.test(digits)) this.fail('invalid escape sequence: \\x');
      this.pos += 2;
    }
    return parseInt(digits, 16);
  }

  private characterClass(): Node {
    let cost = 0;
    if (this.peek() === '^') {
      this.pos++;
      cost += COST.negation;
    }
    let first = true;
    while (true) {
      if (this.pos >= this.chars.length) this.fail('missing ]');
      if (this.peek() === ']' && !first) {
        this.pos++;
        return { cost: cost + 1, product: 1 };
      }
      const lowAt = this.pos;
      const low = this.classItem(first);
      first = false;
      if (this.peek() === '-' && this.chars[this.pos + 1] !== ']' && this.chars[this.pos + 1] !== undefined) {
        this.pos++;
        const highAt = this.pos;
        const high = this.classItem(false);
        if (typeof low !== 'number' || typeof high !== 'number') this.fail('bad character class range');
        if (this.chars[lowAt] === '-' || this.chars[highAt] === '-') this.fail('bad character class range');
        if (low > high) this.fail('invalid character class range');
        cost += high < 0x80 ? COST.literal : COST.nonAscii;
      } else if (typeof low === 'number') {
        // A bare '-' is accepted only first or last, where it is unambiguously literal.
        if (this.chars[lowAt] === '-' && !this.isClassStart(lowAt) && this.peek() !== ']') {
          this.fail('bad character class range');
        }
        cost += low < 0x80 ? COST.literal : COST.nonAscii;
      } else {
        cost += low.cost;
      }
    }
  }

  private isClassStart(at: number): boolean {
    const before = this.chars[at - 1];
    return before === '[' || (before === '^' && this.chars[at - 2] === '[');
  }

  /** A code point, or a class (`\d`, `\pL`, `[:alpha:]`) with its cost. */
  private classItem(first: boolean): number | Node {
    const c = this.peek();
    if (c === '[' && this.chars[this.pos + 1] === ':') {
      const close = this.chars.indexOf(':', this.pos + 2);
      if (close !== -1 && this.chars[close + 1] === ']') {
        const name = this.chars.slice(this.pos + 2, close).join('');
        if (!POSIX_CLASSES.has(name.startsWith('^') ? name.slice(1) : name)) this.fail(`invalid character class range: [:${name}:]`);
        this.pos = close + 2;
        return { cost: COST.posix, product: 1 };
      }
    }
    if (c === ']' && !first) this.fail('missing ]');
    this.pos++;
    if (c !== '\\') return c.codePointAt(0)!;
    const next = this.peek();
    if (next === undefined) this.fail('missing ]');
    if ('dsw'.includes(next)) {
      this.pos++;
      return { cost: COST.perlClass, product: 1 };
    }
    if ('DSW'.includes(next)) {
      this.pos++;
      return { cost: COST.negatedPerlClass, product: 1 };
    }
    if (next === 'p' || next === 'P') {
      this.pos++;
      this.unicodeClass();
      return { cost: COST.unicode, product: 1 };
    }
    return this.escapedChar();
  }

  private atQuantifier(): boolean {
    const c = this.peek();
    return c === '*' || c === '+' || c === '?' || (c === '{' && this.countedRepeat() !== null);
  }

  private countedRepeat(): { min: number; max: number | null; length: number } | null {
    const rest = this.chars.slice(this.pos, this.pos + 24).join('');
    const match = /^\{(\d+)(,(\d*))?\}/.exec(rest);
    if (!match) return null;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : match[3] === '' ? null : Number(match[3]);
    return { min, max, length: Array.from(match[0]).length };
  }

  private quantified(atom: Node): Node {
    const c = this.peek();
    if (c !== '{') {
      this.pos++;
      return { cost: atom.cost + 1, product: atom.product };
    }
    const repeat = this.countedRepeat()!;
    this.pos += repeat.length;
    const { min, max } = repeat;
    if (min > MAX_REPEAT || (max !== null && (max > MAX_REPEAT || max < min))) this.fail('invalid repetition size');
    const count = max ?? min;
    const product = count > 0 ? atom.product * count : atom.product;
    if (product > MAX_REPEAT) this.fail('invalid repetition size');
    return { cost: atom.cost * Math.max(max ?? min + 1, 1), product };
  }

  private peek(): string {
    return this.chars[this.pos];
  }

  private fail(message: string): never {
    throw new RegexSyntaxError(message);
  }
}

function charCost(c: string): number {
  return c.codePointAt(0)! < 0x80 ? COST.literal : COST.nonAscii;
}
