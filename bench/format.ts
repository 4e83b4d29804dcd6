/** Small helpers the benchmark reports share. */
import fs from 'node:fs';

/** A whole number with thousands separators, as the tables print them. */
export const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** A file's size in MiB; 0 when it does not exist (yet). */
export const fileMb = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size / 2 ** 20 : 0);
