import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 text of `length` characters (rejection sampling keeps it unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export const newProjectApiKey = () => `phc_${randomBase62(43)}`;
export const newPersonalApiKey = () => `phx_${randomBase62(47)}`;

/** Whether a value can be a personal API key: /api/ refuses anything else before any lookup (a project key, say). */
export const hasPersonalKeyShape = (value: string) => value.startsWith('phx_') && value.length <= 200;

export const sha256Hex = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** What a key looks like after creation: first 4 and last 4 characters. */
export const maskKey = (value: string) => `${value.slice(0, 4)}...${value.slice(-4)}`;
