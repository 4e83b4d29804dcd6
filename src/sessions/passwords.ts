/**
 * Password hashing with scrypt from node:crypto. The stored text names its parameters, so they
 * can be raised later without breaking the hashes already stored.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { randomBase62 } from '../util/keys.js';

/** 2^15 × 8 × 128 bytes = 32 MiB and ~50-100 ms per hash here: costly to guess, affordable per sign-in. */
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;

export const MIN_PASSWORD_LENGTH = 8;
/** Long enough for any passphrase; bounds the work one request can ask for. */
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/** `scrypt$N$r$p$<salt>$<key>`, salt and key in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash of nothing in particular: checking a password against it takes as long as a real check. */
let decoy: Promise<string> | null = null;
export const decoyHash = () => (decoy ??= hashPassword(randomBase62(20)));

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `This password is too short. It must contain at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `This password is too long (at most ${MAX_PASSWORD_LENGTH} characters).`;
  return null;
}

/** A password for the first start when none was chosen: 20 base62 characters (~119 bits). */
export const generatePassword = () => randomBase62(20);
