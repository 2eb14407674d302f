/**
 * The instruments file: per-symbol overrides of the built-in catalog and the symbol mapping.
 *
 *   {
 *     "symbolMap":   { "EURUSD": "EURUSD.m" },
 *     "instruments": { "XAUUSD": { "contractSize": 100, "lotMax": 50 },
 *                      "COPPER": { "pipSize": 0.0001, "digits": 4, "contractSize": 25000, "quoteCurrency": "USD" } }
 *   }
 *
 * Instruments are keyed by canonical (signal) symbol. Fields: pipSize, digits, contractSize,
 * lotMin, lotStep, lotMax, quoteCurrency; a symbol the built-in catalog does not know needs at
 * least pipSize, contractSize and quoteCurrency. Parsing is pure (text in); every problem is
 * reported with the line it is on.
 */
import { resolveInstrument, type InstrumentOverride } from './instruments.js';
import { parseLocatedJson, type JsonPath } from './located-json.js';
import { createSymbolMap } from './symbol-map.js';

export interface InstrumentsFile {
  instruments: Record<string, InstrumentOverride>;
  symbolMap: Record<string, string>;
}

export type InstrumentsFileOutcome =
  { ok: true; file: InstrumentsFile } | { ok: false; line: number | null; message: string };

const POSITIVE_FIELDS = ['pipSize', 'contractSize', 'lotMin', 'lotStep', 'lotMax'] as const;
const FIELDS: readonly string[] = [...POSITIVE_FIELDS, 'digits', 'quoteCurrency'];

class FileProblem extends Error {
  constructor(
    message: string,
    readonly path: JsonPath,
  ) {
    super(message);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseInstrumentsFile(text: string): InstrumentsFileOutcome {
  const json = parseLocatedJson(text);
  if (!json.ok) return { ok: false, line: json.line, message: json.message };
  try {
    return { ok: true, file: readFile(json.value) };
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    return { ok: false, line: json.lineOf(error.path), message: error.message };
  }
}

function readFile(value: unknown): InstrumentsFile {
  if (!isObject(value))
    throw new FileProblem('the file must hold one JSON object with "instruments" and/or "symbolMap"', []);
  for (const key of Object.keys(value)) {
    if (key !== 'instruments' && key !== 'symbolMap') {
      throw new FileProblem(`unknown key "${key}"; the file holds "instruments" and "symbolMap"`, [key]);
    }
  }
  const instruments: Record<string, InstrumentOverride> = {};
  if (value.instruments !== undefined) {
    if (!isObject(value.instruments))
      throw new FileProblem('"instruments" must be an object keyed by symbol', ['instruments']);
    for (const [symbol, fields] of Object.entries(value.instruments)) {
      const key = symbol.trim().toUpperCase();
      if (key === '') throw new FileProblem('an instrument needs a symbol', ['instruments', symbol]);
      instruments[key] = readInstrument(symbol, fields);
    }
  }
  const symbolMap: Record<string, string> = {};
  if (value.symbolMap !== undefined) {
    if (!isObject(value.symbolMap))
      throw new FileProblem('"symbolMap" must be an object of symbol → broker symbol', ['symbolMap']);
    for (const [symbol, broker] of Object.entries(value.symbolMap)) {
      if (typeof broker !== 'string' || broker.trim() === '' || symbol.trim() === '') {
        throw new FileProblem(`symbolMap "${symbol}" must map to a non-empty broker symbol`, ['symbolMap', symbol]);
      }
      symbolMap[symbol.trim().toUpperCase()] = broker.trim();
    }
    try {
      createSymbolMap(symbolMap, instruments);
    } catch (error) {
      throw new FileProblem(`symbolMap: ${(error as Error).message}`, ['symbolMap']);
    }
  }
  return { instruments, symbolMap };
}

function readInstrument(symbol: string, fields: unknown): InstrumentOverride {
  const at = (field?: string): JsonPath =>
    field === undefined ? ['instruments', symbol] : ['instruments', symbol, field];
  if (!isObject(fields)) throw new FileProblem(`instrument ${symbol} must be an object of fields`, at());
  const override: { -readonly [K in keyof InstrumentOverride]: InstrumentOverride[K] } = {};
  for (const [field, value] of Object.entries(fields)) {
    if (!FIELDS.includes(field)) {
      throw new FileProblem(
        `instrument ${symbol}: unknown field "${field}"; fields are ${FIELDS.join(', ')}`,
        at(field),
      );
    }
    if (field === 'quoteCurrency') {
      if (typeof value !== 'string' || !/^[A-Za-z]{3}$/.test(value)) {
        throw new FileProblem(`instrument ${symbol}: quoteCurrency must be a 3-letter currency code`, at(field));
      }
      override.quoteCurrency = value.toUpperCase();
    } else if (field === 'digits') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 10) {
        throw new FileProblem(`instrument ${symbol}: digits must be a whole number from 0 to 10`, at(field));
      }
      override.digits = value;
    } else {
      if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
        throw new FileProblem(`instrument ${symbol}: ${field} must be a number above 0`, at(field));
      }
      override[field as (typeof POSITIVE_FIELDS)[number]] = value;
    }
  }
  const key = symbol.trim().toUpperCase();
  const spec = resolveInstrument(key, { [key]: override });
  if (spec === null) {
    const missing = (['pipSize', 'contractSize', 'quoteCurrency'] as const).filter((f) => override[f] === undefined);
    throw new FileProblem(
      `instrument ${symbol} is not in the built-in catalog, so it needs ${missing.join(', ')}`,
      at(),
    );
  }
  if (spec.lotMin > spec.lotMax) {
    throw new FileProblem(`instrument ${symbol}: lotMin (${spec.lotMin}) is above lotMax (${spec.lotMax})`, at());
  }
  return override;
}
