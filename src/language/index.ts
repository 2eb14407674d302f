/**
 * The signal language's public face: the only file of src/language that code outside the folder
 * imports. Pure: text in, normalized signal or problems out; no I/O, clock or randomness.
 *
 *   const outcome = parseSignal('EURUSD,buy,vol_pctbal_loss=1,sl_pips=20', 'text');
 *   if (outcome.ok) renderSignalText(outcome.signal);  // back to the text form
 *   else outcome.problems;                             // every problem, in body order
 */
export { parseSignal } from './parse-signal.js';
export type { ParseOutcome } from './parse-outcome.js';
export type { SignalFormat } from './signal-format.js';
export * from './signal.js';
export { renderSignalText } from './render-signal-text.js';
// The strict JSON reading that also finds a repeated key in the agents' JSON messages.
export {
  readJsonObject,
  type JsonMember,
  type JsonObjectReading,
  type JsonValue,
  MAX_JSON_NESTING,
} from './strict-json-reader.js';
// The bounds every JSON body and agent message is held to before it is parsed.
export { jsonShapeExcess, type JsonShapeExcess, MAX_JSON_VALUES } from './json-shape.js';
// The rules replay files share with signals: symbols, decimals and ASCII case.
export { asciiUpperCase } from './ascii-case.js';
export { readDecimal, type DecimalReading } from './decimal-number.js';
export { symbolProblem } from './symbol-rules.js';
// The parameter table as the API description lists it.
export { documentedParameters, type DocumentedParameter, MAX_TP_LEVELS } from './parameter-table.js';
export type { ParameterDefinition } from './parameter-table.js';
// TradingView alert messages with {{...}} placeholders, for the checker and parse.
export {
  readTradingViewTemplate,
  type TemplatePlaceholder,
  type TemplateReading,
  type TemplateRendering,
} from './tradingview-template.js';
