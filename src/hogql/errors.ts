/**
 * The one error the query compiler throws for bad user input (syntax, unknown names, bad
 * filter shapes). The HTTP layer maps it to a 400 validation error with `attr`.
 */
export class HogQLError extends Error {
  constructor(
    message: string,
    /** 0-based character offset in the expression, when the error has one. */
    readonly position: number | null = null,
    /** Request parameter the input came from (`select`, `where`, `properties`), if known. */
    readonly attr: string | null = null,
    /** Index of the offending expression inside a list parameter, if known. */
    readonly index: number | null = null,
  ) {
    super(message);
    this.name = 'HogQLError';
  }

  /** Same error, tagged with where it came from in the request. */
  withSource(attr: string, index: number | null = null): HogQLError {
    return new HogQLError(this.message, this.position, attr, index);
  }
}

/** An error pinned to a source offset: the message always names the position. */
export function errorAt(message: string, position: number): HogQLError {
  return new HogQLError(`${message} at position ${position}`, position);
}

/** Keeps user text in messages readable and bounded. */
export function quoteForMessage(text: string, max = 80): string {
  const short = text.length > max ? `${text.slice(0, max)}…` : text;
  return `'${short}'`;
}
