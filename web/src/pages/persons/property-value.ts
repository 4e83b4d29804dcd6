/**
 * A property value typed into a text field, read back as the type the property had: numbers stay
 * numbers and true/false stay booleans when the text still reads as one; anything else is text.
 */
export function parseValue(text: string, previous: unknown): unknown {
  if (typeof previous === 'number' && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  if (typeof previous === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  if (previous !== null && typeof previous === 'object') {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
