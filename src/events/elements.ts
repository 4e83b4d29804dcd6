/**
 * PostHog's `elements_chain` text back into element objects, shaped like its ElementSerializer:
 * `a.btn.primary:attr__href="/x"href="/x"nth-child="1"nth-of-type="2"text="Buy";div:…`
 * (innermost element first). One linear scan: the chain is whatever the client sent, so no
 * backtracking regex may look at it.
 */
export interface Element {
  text: string | null;
  tag_name: string | null;
  attr_class: string[] | null;
  href: string | null;
  attr_id: string | null;
  nth_child: number | null;
  nth_of_type: number | null;
  attributes: Record<string, string>;
  order: number;
}

export function parseElementsChain(chain: string): Element[] {
  if (chain === '') return [];
  return splitOutsideQuotes(chain)
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part, order) => parseElement(part, order));
}

/** Splits on `;` that are not inside a double-quoted value (where `\"` does not close it). */
function splitOutsideQuotes(chain: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < chain.length; i++) {
    const c = chain[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === ';' && !quoted) {
      parts.push(chain.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(chain.slice(start));
  return parts;
}

function parseElement(text: string, order: number): Element {
  const element: Element = {
    text: null,
    tag_name: null,
    attr_class: null,
    href: null,
    attr_id: null,
    nth_child: null,
    nth_of_type: null,
    attributes: {},
    order,
  };
  const split = attributesStart(text);
  const head = text.slice(0, split);
  if (head !== '') {
    const [tag, ...classes] = head.split('.');
    element.tag_name = tag;
    if (classes.length > 0) element.attr_class = classes.filter((name) => name !== '');
  }
  for (const [key, value] of attributePairs(text.slice(split + 1))) {
    switch (key) {
      case 'href':
        element.href = value;
        break;
      case 'nth-child':
        element.nth_child = integerOrNull(value);
        break;
      case 'nth-of-type':
        element.nth_of_type = integerOrNull(value);
        break;
      case 'text':
        element.text = value;
        break;
      case 'attr_id':
        element.attr_id = value;
        break;
      default:
        if (key !== '') element.attributes[key] = value;
    }
  }
  return element;
}

/** Index of the `:` that starts the attributes (classes may contain `:` themselves), or the length. */
function attributesStart(text: string): number {
  for (let colon = text.indexOf(':'); colon >= 0; colon = text.indexOf(':', colon + 1)) {
    let i = colon + 1;
    while (i < text.length && /[A-Za-z0-9_-]/.test(text[i])) i++;
    if (text[i] === '=') return colon;
  }
  return text.length;
}

/** `key="value"` pairs, left to right; `\"` inside a value is an escaped quote. */
function* attributePairs(text: string): Generator<[string, string]> {
  let i = 0;
  while (i < text.length) {
    const equals = text.indexOf('="', i);
    if (equals < 0) return;
    let end = equals + 2;
    while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
    if (end >= text.length) return;
    yield [unescape(text.slice(i, equals)), unescape(text.slice(equals + 2, end))];
    i = end + 1;
  }
}

const unescape = (text: string) => text.replace(/\\"/g, '"');

function integerOrNull(value: string): number | null {
  return /^-?\d{1,9}$/.test(value) ? Number(value) : null;
}
