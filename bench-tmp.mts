import { benchFlags } from './bench/flags.ts';
console.log(await benchFlags());
