import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { AdminResult } from '../../admin/admin-result.js';
import {
  deleteRiskRules,
  haltTarget,
  listHalts,
  putRiskRules,
  releaseTarget,
  riskAudit,
  showRiskRules,
} from '../../admin/risk.js';
import { problemBody } from '../../errors/problem-body.js';
import type { HaltScope } from '../../store/risk.js';
import type { Store } from '../../store/store.js';
import { withStore } from './with-store.js';

/** Who the audit log names for a change made with this command. */
const CLI_ACTOR = 'command line';

interface Target {
  account?: string;
  source?: string;
  agent?: string;
}

/**
 * `signalgate risk …`: risk rules, halts and the audit log (docs/risk.md), on the store the
 * server uses, through the operations the admin API runs (so the same checks and the same audit).
 */
export function registerRiskCommands(program: Command): void {
  const run = (operation: (store: Store) => Promise<AdminResult<unknown>>) =>
    runOnStore(operation, program.opts<{ create?: boolean }>().create === true);
  const risk = program.command('risk').description('risk rules, halts (the kill switch) and their audit log');
  const rules = risk.command('rules').description("an account's or a source's risk rules");
  const ruleTarget = (command: Command) =>
    command
      .option('--account <accountId>')
      .option('--source <sourceId>', "a source's rules only tighten its account's");
  ruleTarget(rules.command('show')).action((o: Target) => {
    const target = oneTarget(o, ['account', 'source']);
    if (target) return run((store) => showRiskRules(store, target.scope as 'account' | 'source', target.id));
  });
  ruleTarget(rules.command('set'))
    .requiredOption('--file <file>', 'the rules as JSON (the body of PUT …/risk-rules); - reads stdin')
    .action((o: Target & { file: string }) => {
      const target = oneTarget(o, ['account', 'source']);
      if (!target) return;
      let body: unknown;
      try {
        body = JSON.parse(readFileSync(o.file === '-' ? 0 : o.file, 'utf8'));
      } catch (error) {
        return fail(
          `--file ${o.file}: ${error instanceof Error ? error.message : String(error)}; give a JSON file of rules`,
        );
      }
      return run((store) =>
        putRiskRules(store, target.scope as 'account' | 'source', target.id, body, CLI_ACTOR, Date.now()),
      );
    });
  ruleTarget(rules.command('delete')).action((o: Target) => {
    const target = oneTarget(o, ['account', 'source']);
    if (!target) return;
    return run(async (store) => {
      const result = await deleteRiskRules(
        store,
        target.scope as 'account' | 'source',
        target.id,
        CLI_ACTOR,
        Date.now(),
      );
      return result.ok ? { ok: true, value: { deleted: target.id } } : result;
    });
  });
  const haltTargetOptions = (command: Command) =>
    command.option('--account <accountId>').option('--source <sourceId>').option('--agent <agentId>');
  haltTargetOptions(risk.command('halt'))
    .description('halt: signals are answered and logged as halted, never delivered, until released by hand')
    .requiredOption('--reason <reason>')
    .option('--flatten', "also close every position and cancel every pending order of the account's agents")
    .action((o: Target & { reason: string; flatten?: boolean }) => {
      const target = oneTarget(o, ['account', 'source', 'agent']);
      if (!target) return;
      const body = { reason: o.reason, ...(o.flatten ? { flatten: true } : {}) };
      return run((store) => haltTarget(store, target.scope, target.id, body, CLI_ACTOR, Date.now()));
    });
  haltTargetOptions(risk.command('release'))
    .description('release a halt; what came while halted stays halted')
    .action((o: Target) => {
      const target = oneTarget(o, ['account', 'source', 'agent']);
      if (target)
        return run((store) => releaseTarget(store, target.scope, target.id, undefined, CLI_ACTOR, Date.now()));
    });
  risk
    .command('halts')
    .description('the halts in force, newest first')
    .option('--account <accountId>')
    .option('--all', 'released halts too')
    .action((o: { account?: string; all?: boolean }) =>
      run((store) => listHalts(store, { accountId: o.account, all: o.all ? 'true' : undefined })),
    );
  risk
    .command('audit')
    .description('the audit log of rules, halts and flattens, newest first')
    .option('--account <accountId>')
    .option('--limit <n>')
    .option('--before <id>', "the previous page's next")
    .action((o: { account?: string; limit?: string; before?: string }) =>
      run((store) => riskAudit(store, { accountId: o.account, limit: o.limit, before: o.before })),
    );
}

/** The one target the options name; said on stderr (exit 1) unless exactly one is given. */
function oneTarget(o: Target, allowed: HaltScope[]): { scope: HaltScope; id: string } | null {
  const given = allowed.filter((scope) => o[scope] !== undefined);
  if (given.length !== 1) {
    fail(`give exactly one of ${allowed.map((scope) => `--${scope} <id>`).join(', ')}`);
    return null;
  }
  return { scope: given[0]!, id: o[given[0]!]! };
}

function fail(message: string): void {
  process.stderr.write(`signalgate: ${message}\n`);
  process.exitCode = 1;
}

async function runOnStore(operation: (store: Store) => Promise<AdminResult<unknown>>, create: boolean): Promise<void> {
  await withStore(
    async (store) => {
      const result = await operation(store);
      if (result.ok) {
        if (result.value !== null) process.stdout.write(`${JSON.stringify(result.value, null, 2)}\n`);
      } else {
        process.stderr.write(`${JSON.stringify(problemBody(result.problems), null, 2)}\n`);
        process.exitCode = 1;
      }
    },
    { create },
  );
}
