import type { Command } from 'commander';
import type { AdminResult } from '../../admin/admin-result.js';
import {
  channelMessages,
  createChannel,
  deleteChannel,
  listChannels,
  showChannel,
  testChannel,
  updateChannel,
} from '../../admin/channels.js';
import { cliPublicUrl } from '../../admin/recorded-public-url.js';
import { DEFAULT_NOTIFICATION_SETTINGS } from '../../config/config.js';
import { problemBody } from '../../errors/problem-body.js';
import { readSecretFile } from '../../files/secret-file.js';
import { DEFAULT_TRANSPORT } from '../../notifications/transport-defaults.js';
import type { Store } from '../../store/store.js';
import { withStore } from './with-store.js';

/** Which field `--secret-file` fills, per kind: the secret the channel sends with. */
const MAIN_SECRET: Record<string, string> = {
  telegram: 'botToken',
  webhook: 'url',
  discord: 'url',
  slack: 'url',
  email: 'password',
};

interface ChannelFlags {
  name?: string;
  events?: string;
  enabled?: string;
  chatId?: string;
  host?: string;
  port?: string;
  security?: string;
  username?: string;
  from?: string;
  to?: string;
  secretFile?: string;
  signingSecretFile?: string;
}

/**
 * `signalgate channels …`: notification channels (docs/notifications.md), on the store the
 * server uses. Secrets are read from files (`-`: standard input), never from flags, which the
 * process list and the shell's history would show.
 */
export function registerChannelCommands(program: Command): void {
  const run = (operation: Operation) => runOnStore(operation, program.opts<{ create?: boolean }>().create === true);
  const channels = program.command('channels').description('notification channels of an account');
  const withFlags = (command: Command) =>
    command
      .option('--events <list>', 'comma-separated events the channel is told of (default: all)')
      .option('--enabled <true|false>')
      .option('--chat-id <id>', 'Telegram: the chat the bot writes to')
      .option('--host <host>', 'e-mail: the SMTP server')
      .option('--port <port>', 'e-mail: the SMTP port (default 587, 465 with tls, 25 with none)')
      .option('--security <starttls|tls|none>', 'e-mail: how the connection is protected (default starttls)')
      .option('--username <user>', 'e-mail: the SMTP user')
      .option('--from <address>', 'e-mail: the sender address')
      .option('--to <addresses>', 'e-mail: the addresses told, separated by commas')
      .option(
        '--secret-file <file>',
        'the bot token (Telegram), the URL (webhook, Discord, Slack) or the SMTP password (e-mail); - reads stdin',
      )
      .option('--signing-secret-file <file>', 'webhook: the key of its X-Signature header; - reads stdin');
  withFlags(
    channels
      .command('create')
      .requiredOption('--account <accountId>')
      .requiredOption('--kind <kind>', 'webhook, telegram, discord, slack or email')
      .requiredOption('--name <name>'),
  ).action((o: ChannelFlags & { account: string; kind: string }) => {
    const body = bodyOf(o, o.kind);
    if (body === null) return;
    return run((store) => createChannel(store, o.account, { kind: o.kind, ...body }, Date.now()));
  });
  channels
    .command('list')
    .option('--account <accountId>', "only this account's channels")
    .action((o: { account?: string }) =>
      run((store) => listChannels(store, o.account === undefined ? {} : { accountId: o.account })),
    );
  channels.command('show <channelId>').action((id: string) => run((store) => showChannel(store, id)));
  channels
    .command('messages <channelId>')
    .description("the channel's latest messages, newest first")
    .action((id: string) => run((store) => channelMessages(store, id)));
  withFlags(channels.command('update <channelId>').option('--name <name>')).action((id: string, o: ChannelFlags) =>
    run(async (store) => {
      const current = await store.notifications.getChannel(id);
      const body = bodyOf(o, current?.kind ?? '');
      if (body === null) return { ok: true, value: null };
      return updateChannel(store, id, body);
    }),
  );
  channels.command('delete <channelId>').action((id: string) =>
    run(async (store) => {
      const result = await deleteChannel(store, id);
      return result.ok ? { ok: true, value: { deleted: id } } : result;
    }),
  );
  channels
    .command('test <channelId>')
    .description('send a test message through the channel now')
    .action((id: string) =>
      run((store, publicUrl, telegramApiUrl) =>
        testChannel(store, id, undefined, {
          transport: { ...DEFAULT_TRANSPORT, telegramApiUrl },
          dashboardUrl: publicUrl,
          nowMillis: Date.now(),
        }),
      ),
    );
}

/** The admin body the flags make; null (said on stderr, exit 1) when a secret file cannot be read. */
function bodyOf(o: ChannelFlags, kind: string): Record<string, unknown> | null {
  const body: Record<string, unknown> = {};
  if (o.name !== undefined) body.name = o.name;
  if (o.events !== undefined) body.events = o.events.split(',').map((e) => e.trim());
  if (o.enabled !== undefined) body.enabled = o.enabled === 'true' ? true : o.enabled === 'false' ? false : o.enabled;
  if (o.chatId !== undefined) body.chatId = o.chatId;
  for (const name of ['host', 'security', 'username', 'from', 'to'] as const) {
    if (o[name] !== undefined) body[name] = o[name];
  }
  // A port that is not a number is passed on as given, so the field error names it.
  if (o.port !== undefined) body.port = /^\d+$/.test(o.port) ? Number(o.port) : o.port;
  for (const [flag, file, field] of [
    ['--secret-file', o.secretFile, MAIN_SECRET[kind] ?? 'url'],
    ['--signing-secret-file', o.signingSecretFile, 'signingSecret'],
  ] as const) {
    if (file === undefined) continue;
    const read = readSecretFile(flag, file);
    if (!read.ok) {
      process.stderr.write(`${read.message}\n`);
      process.exitCode = 1;
      return null;
    }
    for (const warning of read.warnings) process.stderr.write(`warning: ${warning}\n`);
    body[field] = read.secret;
  }
  return body;
}

type Operation = (store: Store, publicUrl: string, telegramApiUrl: string) => Promise<AdminResult<unknown>>;

async function runOnStore(operation: Operation, create: boolean): Promise<void> {
  await withStore(
    async (store, config) => {
      const telegramApiUrl = (config.notifications ?? DEFAULT_NOTIFICATION_SETTINGS).telegramApiUrl;
      const result = await operation(store, await cliPublicUrl(store, config), telegramApiUrl);
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
