import { createRequire } from 'node:module';
import type ccxtModule from 'ccxt';

/**
 * CCXT, loaded from its CommonJS build: the same release as its ES module build, with the same
 * exchanges and error classes, but it loads with markedly less CPU (decision 0052-agent-start-cpu),
 * which a ccxt agent pays at every start. Everything in the process that throws or checks CCXT's
 * error classes must take them from here: the two builds' classes are not each other's
 * (`instanceof` across them is false).
 */
export const ccxt = createRequire(import.meta.url)('ccxt') as typeof ccxtModule;
