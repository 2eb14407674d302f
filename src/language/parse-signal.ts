/**
 * Parses one signal body (a text line or a JSON object) into the normalized signal, or into
 * every problem found. A body that cannot be read at all is one PARSE_ERROR; otherwise the
 * problems are the validation codes of docs/signal-language.md, in body order.
 */
import { ErrorCode } from '../errors/catalog.js';
import { asciiLowerCase } from './ascii-case.js';
import { normalizeEntries } from './normalize-entries.js';
import type { ParseOutcome } from './parse-outcome.js';
import type { SignalEntry } from './signal-entry.js';
import type { SignalFormat } from './signal-format.js';
import { readJsonObject } from './strict-json-reader.js';
import { tokenizeSignalLine } from './text-tokenizer.js';

export function parseSignal(body: string, format: SignalFormat): ParseOutcome {
  // A leading byte order mark is an editor's artefact, not part of the signal.
  const text = body.startsWith('\uFEFF') ? body.slice(1) : body;
  const reading =
    format === 'json' ? jsonEntries(text) : startsLikeJson(text) ? jsonInTextForm(text) : textEntries(text);
  if (!reading.ok)
    return {
      ok: false,
      problems: [{ code: ErrorCode.PARSE_ERROR, detail: unfilledPlaceholder(text) ?? reading.detail }],
    };
  return normalizeEntries(reading.entries, format);
}

/**
 * A body that starts with `{{...}}` is a TradingView alert message whose placeholder TradingView
 * did not fill in (a misspelt name, or a strategy placeholder in an indicator alert): "malformed
 * JSON" would send the sender looking for a JSON mistake that is not there.
 */
function unfilledPlaceholder(text: string): string | undefined {
  const placeholder = /^[ \t\r\n]*(\{\{[ -z|~]{0,60}\}\})/.exec(text)?.[1];
  if (placeholder === undefined) return undefined;
  return `the body starts with ${placeholder}, a TradingView placeholder that was not filled in: TradingView fills in only the placeholders it knows for the kind of alert (strategy.* only in strategy alerts); check the alert's message with signalgate parse or the dashboard's checker, which show what each placeholder becomes`;
}

type EntryReading = { ok: true; entries: SignalEntry[] } | { ok: false; detail: string };

/** The first non-blank character is `{`: no text signal starts so (a symbol holds no `{`). */
function startsLikeJson(text: string): boolean {
  return /^[ \t\r\n]*\{/.test(text);
}

/**
 * A body meant as JSON but read as text (sent as text/plain, as TradingView sends a message
 * that is not valid JSON): the text reader's complaint about quotes in token 1 would hide the
 * real mistake. So it gets the JSON reader's explanation, the very one it gets when read as
 * JSON; valid JSON is still not taken as a text signal, but told how to send it.
 */
function jsonInTextForm(text: string): EntryReading {
  const json = readJsonObject(text);
  if (!json.ok) return json;
  return {
    ok: false,
    detail:
      'the body is a JSON object but is read as the text form (EURUSD,buy,...); send it with Content-Type: application/json',
  };
}

function textEntries(text: string): EntryReading {
  const tokenizing = tokenizeSignalLine(text);
  if (!tokenizing.ok) return tokenizing;
  const { tokens } = tokenizing;
  const entries: SignalEntry[] = [];
  for (const token of tokens) {
    if (token.index < 2) {
      const name = token.index === 0 ? 'symbol' : 'action';
      entries.push({
        name,
        value: { kind: 'text', text: token.raw, quoted: false },
        position: token.index,
        positional: true,
      });
      continue;
    }
    const value: SignalEntry['value'] =
      token.value === undefined
        ? { kind: 'bare' }
        : { kind: 'text', text: token.value.text, quoted: token.value.quoted };
    entries.push({ name: asciiLowerCase(token.name), value, position: token.index });
  }
  return { ok: true, entries };
}

function jsonEntries(text: string): EntryReading {
  const reading = readJsonObject(text);
  if (!reading.ok) return reading;
  const { members } = reading;
  const entries: SignalEntry[] = [];
  for (let index = 0; index < members.length; index += 1) {
    const member = members[index]!;
    entries.push({ name: asciiLowerCase(member.key), value: { kind: 'json', json: member.value }, position: index });
  }
  return { ok: true, entries };
}
