/** An id given as text ("42") as a number; null for anything else (or too long to be one of ours). */
export function numericId(text: string): number | null {
  return /^\d{1,15}$/.test(text) ? Number(text) : null;
}
