// `node --import ./bench/run-typescript.mjs bench/main.ts`: installs typescript-hooks.mjs.
import { register } from 'node:module';

register('./typescript-hooks.mjs', import.meta.url);
