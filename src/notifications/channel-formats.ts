import type { NotificationText } from './notification-text.js';

/** The limits the receivers document: Telegram 4096 characters, Discord 2000, Slack's text 40000. */
const TELEGRAM_MAX = 4096;
const DISCORD_MAX = 2000;
const SLACK_MAX = 40_000;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The message as plain lines: what happened, the details, what to do, the link. */
export function plainText(text: NotificationText): string {
  return [text.title, ...text.lines, `What to do: ${text.whatToDo}`, text.link].join('\n');
}

/** The outbound webhook's JSON body (signed over its raw bytes, see channel-transports.ts). */
export function webhookBody(text: NotificationText, id: number): Record<string, unknown> {
  return {
    id,
    event: text.kind,
    title: text.title,
    details: text.lines,
    whatToDo: text.whatToDo,
    link: text.link,
    count: text.count,
    firstAt: text.firstAt,
    lastAt: text.lastAt,
  };
}

/** Telegram Bot API sendMessage: plain text (no parse_mode, so nothing in it needs escaping). */
export function telegramBody(text: NotificationText, chatId: string): Record<string, unknown> {
  return { chat_id: chatId, text: clip(plainText(text), TELEGRAM_MAX), link_preview_options: { is_disabled: true } };
}

/** A Discord incoming webhook's execute body: `content`, mentions switched off. */
export function discordBody(text: NotificationText): Record<string, unknown> {
  return { content: clip(plainText(text), DISCORD_MAX), allowed_mentions: { parse: [] } };
}

/** A Slack incoming webhook's body: `text` (the fallback) and Block Kit sections. */
export function slackBody(text: NotificationText): Record<string, unknown> {
  const details = [...text.lines, `*What to do:* ${text.whatToDo}`].join('\n');
  return {
    text: clip(plainText(text), SLACK_MAX),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${slackEscape(text.title)}*` } },
      { type: 'section', text: { type: 'mrkdwn', text: clip(slackEscape(details), 3000) } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `<${text.link}|Open in the dashboard>` }] },
    ],
  };
}

/** Slack's mrkdwn reserves &, < and >. */
function slackEscape(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An e-mail's subject and plain-text body. */
export function emailMessage(text: NotificationText): { subject: string; text: string } {
  return { subject: `[signalgate] ${clip(text.title, 200)}`, text: plainText(text) };
}
