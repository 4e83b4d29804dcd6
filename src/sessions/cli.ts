/** `sightline users set-password --email <e-mail>`: the new password comes from standard input. */
import type { Readable } from 'node:stream';
import type { MetaStore } from '../store/types.js';
import { SessionService } from './service.js';
import { MAX_PASSWORD_LENGTH } from './passwords.js';

/** All of `input`, less one line end at the end (from `echo` or a typed Enter). */
export async function readPassword(input: Readable): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    // Refuse before reading a whole file piped in by mistake.
    if (text.length > MAX_PASSWORD_LENGTH + 2) break;
  }
  return text.replace(/\r?\n$/, '');
}

/** Sets the password of the user with `email` and signs them out everywhere; the message to print. */
export async function setPasswordFromInput(meta: MetaStore, email: string, input: Readable): Promise<string> {
  const password = await readPassword(input);
  const user = await new SessionService(meta).resetPassword(email, password);
  return `Password set for ${user.email}; their browser sessions have ended.`;
}
