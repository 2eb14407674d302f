import { statSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { ErrorCode, type Problem } from '../../errors/catalog.js';
import { type BodyVerdict, judgeBody } from '../../inbound/judge-body.js';
import { checkMessage, type SignalCheck } from '../../admin/check-signal.js';
import { readTradingViewTemplate, type ParseOutcome, type SignalFormat } from '../../language/index.js';

/**
 * `signalgate parse [signal]`: checks one signal exactly as the inbound endpoint would and
 * prints its normalized form, so a sender can test a template before money depends on it.
 * Without the argument the signal is read from stdin.
 */
export function registerParseCommand(program: Command): void {
  program
    .command('parse')
    .description(
      'parse one signal (text or JSON) and print the normalized signal; exits 1 with the problems when it is not valid',
    )
    .argument('[signal]', 'the signal, e.g. "EURUSD,buy,vol=0.1,sl_pips=20"; read from stdin when omitted')
    .addOption(
      new Option('--format <format>', 'body format; auto takes JSON when the first non-blank character is {')
        .choices(['text', 'json', 'auto'])
        .default('auto'),
    )
    .option('--json', 'print problems as JSON {code, param, detail, errors} on stdout instead of text on stderr')
    .action(async (argument: string | undefined, options: { format: SignalFormat | 'auto'; json?: boolean }) => {
      const body = argument ?? (await readStdin());
      if (body !== undefined && readTradingViewTemplate(body) !== null) {
        process.exitCode = reportTemplate(checkMessage(CONTENT_TYPES[options.format], body), options.json === true)
          ? 0
          : 1;
        return;
      }
      // Judged as the inbound endpoint judges a body: --format auto is a request without a
      // Content-Type, text and json are text/plain and application/json.
      const outcome: ParseOutcome =
        body === undefined
          ? {
              ok: false,
              problems: [
                { code: ErrorCode.PARSE_ERROR, detail: 'the input is not valid UTF-8; send the signal as UTF-8 text' },
              ],
            }
          : parseOutcome(judgeBody(CONTENT_TYPES[options.format], undefined, Buffer.from(body, 'utf8'), body));
      if (outcome.ok) {
        process.stdout.write(`${JSON.stringify(outcome.signal, null, 2)}\n`);
        return;
      }
      reportProblems(outcome.problems, options.json === true);
      if (options.json !== true && argument !== undefined && namesFile(argument)) {
        process.stderr.write(
          `note: '${argument}' is read as the signal itself; to check the signal in that file, run: signalgate parse < ${argument}\n`,
        );
      }
      process.exitCode = 1;
    });
}

/** A signal has commas; an argument without any that names a file was likely meant as its path. */
function namesFile(argument: string): boolean {
  if (argument.includes(',')) return false;
  try {
    return statSync(argument).isFile();
  } catch {
    return false;
  }
}

const CONTENT_TYPES: Record<SignalFormat | 'auto', string | undefined> = {
  auto: undefined,
  text: 'text/plain',
  json: 'application/json',
};

function parseOutcome(verdict: BodyVerdict): ParseOutcome {
  return verdict.ok ? { ok: true, signal: verdict.signal } : { ok: false, problems: verdict.problems };
}

/** The whole of stdin as UTF-8; undefined when the bytes are not UTF-8. */
async function readStdin(): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.concat(chunks));
  } catch {
    return undefined;
  }
}

/**
 * A TradingView alert message with placeholders: what each becomes, the warnings and each message
 * it can turn into (on stderr), then the normalized signal of the sample values, or the problems of
 * the first message refused. With --json, the checker's whole answer on stdout. True when valid.
 */
function reportTemplate(check: SignalCheck, asJson: boolean): boolean {
  const template = check.template!;
  if (asJson) {
    process.stdout.write(`${JSON.stringify(check, null, 2)}\n`);
    return check.valid;
  }
  const lines = ['a TradingView alert message: checked with sample values for its placeholders'];
  for (const p of template.placeholders) {
    lines.push(`  ${p.written} → ${p.becomes ?? '(left as written)'}${p.note === undefined ? '' : `: ${p.note}`}`);
  }
  for (const c of template.checked) lines.push(`  ${c.valid ? 'valid  ' : 'REFUSED'} ${c.body}`);
  for (const warning of template.warnings) lines.push(`warning: ${warning}`);
  process.stderr.write(`${lines.join('\n')}\n`);
  if (check.valid) {
    process.stdout.write(`${JSON.stringify(check.signal, null, 2)}\n`);
    return true;
  }
  reportProblems(check.errors, false);
  return false;
}

function reportProblems(problems: readonly Problem[], asJson: boolean): void {
  const [first] = problems;
  if (first === undefined) return;
  if (asJson) {
    const answer = {
      code: first.code,
      ...(first.param !== undefined && { param: first.param }),
      detail: first.detail,
      errors: problems,
    };
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
    return;
  }
  const heading =
    problems.length === 1 ? 'the signal is not valid:' : `the signal is not valid (${problems.length} problems):`;
  const lines = problems.map(
    (problem) => `  ${problem.code}${problem.param === undefined ? '' : ` [${problem.param}]`}: ${problem.detail}`,
  );
  process.stderr.write(`${[heading, ...lines].join('\n')}\n`);
}
