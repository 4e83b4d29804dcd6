/**
 * Writing flag answers as JSON from pieces that are already JSON. A 50-flag answer is a few
 * hundred small objects: building and `JSON.stringify`-ing them cost more than evaluating the
 * flags. Here cached pieces are joined (or, for the large ones, their cached UTF-8 copied) into
 * the answer's bytes, which are byte for byte what `JSON.stringify` gives for the equivalent
 * object.
 */

/**
 * JSON standing in for a value inside a body passed to `toJson`, in parts: text, or UTF-8 bytes
 * for large cached pieces (copying bytes beats re-encoding them; for many tiny pieces joining
 * text is cheaper than copying each).
 */
export class RawJson {
  constructor(readonly parts: readonly (string | Buffer)[]) {}
}

/** A constant's JSON, made once, for bodies passed to `toJson`. */
export function constantJson(value: unknown): RawJson {
  return new RawJson([JSON.stringify(value)]);
}

// Member names of answer bodies come from code, so they are few; each is quoted once.
const names = new Map<string, string>();

function nameJson(key: string): string {
  let name = names.get(key);
  if (name === undefined) {
    name = JSON.stringify(key);
    if (names.size < 1000) names.set(key, name);
  }
  return name;
}

/** `JSON.stringify(body)` as UTF-8, except that `RawJson` members are written as they are. */
export function toJson(body: Record<string, unknown>): Buffer {
  const bytes: Buffer[] = [];
  let text = '{';
  let members = 0;
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (value instanceof RawJson) {
      text += `${members++ === 0 ? '' : ','}${nameJson(key)}:`;
      for (const part of value.parts) {
        if (typeof part === 'string') {
          text += part;
        } else {
          if (text !== '') bytes.push(Buffer.from(text));
          bytes.push(part);
          text = '';
        }
      }
      continue;
    }
    const json = typeof value === 'boolean' ? String(value) : (JSON.stringify(value) as string | undefined);
    // Like JSON.stringify: members whose value has no JSON form (undefined, functions) are left out.
    if (json === undefined) continue;
    text += `${members++ === 0 ? '' : ','}${nameJson(key)}:${json}`;
  }
  text += '}';
  if (bytes.length === 0) return Buffer.from(text);
  bytes.push(Buffer.from(text));
  return Buffer.concat(bytes);
}

/** The array index a key names ("0", "42"), or null: JS objects list those keys first, in numeric order. */
export function indexOfKey(key: string): number | null {
  return /^(?:0|[1-9]\d*)$/.test(key) && Number(key) < 2 ** 32 - 1 ? Number(key) : null;
}

/**
 * An object's members, kept in the order `JSON.stringify` lists an object's keys: array-index
 * keys first, ascending, then the rest in insertion order.
 */
class OrderedMembers<T> {
  private readonly members: T[] = [];
  private indexed: { index: number; item: T }[] | null = null;

  /** `index` is `indexOfKey()` of the member's key. */
  add(member: T, index: number | null): void {
    if (index === null) this.members.push(member);
    else (this.indexed ??= []).push({ index, item: member });
  }

  protected ordered(): T[] {
    const indexed = this.indexed;
    return indexed ? [...indexed.sort((a, b) => a.index - b.index).map((entry) => entry.item), ...this.members] : this.members;
  }
}

/** An object's JSON from its members as text (`"key":value`, keys unique). */
export class JsonObjectText extends OrderedMembers<string> {
  /** The object; with `[` `]` the same items as an array (for lists of keys). */
  toRaw(open: '{' | '[' = '{', close: '}' | ']' = '}'): RawJson {
    return new RawJson([`${open}${this.ordered().join(',')}${close}`]);
  }
}

/** A large member as UTF-8, on its own and after a comma, so that an answer copies each once. */
export interface MemberBytes {
  alone: Buffer;
  afterComma: Buffer;
}

export function memberBytes(member: string): MemberBytes {
  return { alone: Buffer.from(member), afterComma: Buffer.from(`,${member}`) };
}

/** `JsonObjectText` for large cached members (`MemberBytes`). */
export class JsonObjectBytes extends OrderedMembers<MemberBytes> {
  toRaw(): RawJson {
    const members = this.ordered();
    const parts: (string | Buffer)[] = ['{'];
    for (let i = 0; i < members.length; i++) parts.push(i === 0 ? members[i].alone : members[i].afterComma);
    parts.push('}');
    return new RawJson(parts);
  }
}
