import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { useAgentTestBed } from '../agent/support/agent-test-bed.js';
import { NotificationReceivers } from '../fakes/notification-receivers.js';
import { TEST_ADMIN_TOKEN } from '../support/start-test-server.js';
import { type Browser, DESKTOP, openBrowser, PHONE } from './support/chromium.js';

/** Screenshots land where docs/dashboard.md shows them. */
const IMAGES = path.resolve('docs/images');

/**
 * The operator's dashboard in Debian's Chromium against a real server, a real paper agent
 * process and real HTTP signals: one operator's session from sign-in to sign-out. The steps
 * build on each other, so they run in order.
 */
describe('the dashboard in a browser', () => {
  const bed = useAgentTestBed();
  let browser: Browser;
  let page: Page;
  let inboundPath = '';
  let agentToken = '';
  /** The paper agent's data: kept across tests, so the trades test starts it again on the same account. */
  const agentDir = mkdtempSync(path.join(tmpdir(), 'signalgate-dashboard-agent-'));
  let openedSignalId = '';

  beforeAll(async () => {
    browser = await openBrowser();
    page = browser.page;
  });
  afterAll(async () => {
    await browser?.close();
    rmSync(agentDir, { recursive: true, force: true });
  });

  const shot = async (name: string, size = DESKTOP) => {
    await page.setViewportSize(size);
    await page.screenshot({
      path: path.join(IMAGES, `dashboard-${name}-${size === PHONE ? 'phone' : 'desktop'}.png`),
      fullPage: size === PHONE,
    });
    await page.setViewportSize(DESKTOP);
  };
  const go = async (view: string) => {
    await page.goto(`${bed.server.url}/#${view}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
  };
  const post = (urlPath: string, body: string) =>
    fetch(bed.server.url + urlPath, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });

  it('is served with a strict Content-Security-Policy and signs in with the admin token only', async () => {
    const answer = await page.goto(`${bed.server.url}/`);
    const csp = answer!.headers()['content-security-policy']!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const token = page.getByLabel('Admin token');
    expect(await token.getAttribute('type')).toBe('password');
    await shot('sign-in');

    await token.fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not the admin token');

    await token.fill(TEST_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();

    const [cookie, ...others] = await browser.context.cookies();
    expect(others).toEqual([]);
    expect(cookie).toMatchObject({ name: 'signalgate_session', httpOnly: true, sameSite: 'Strict' });
    expect(cookie!.value).not.toContain(TEST_ADMIN_TOKEN);
    // The token is in no URL and no browser storage.
    expect(page.url()).not.toContain(TEST_ADMIN_TOKEN);
    const stored = await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })');
    expect(stored).toBe('{}{}');
  });

  it('creates an account', async () => {
    await go('accounts');
    await page.getByLabel('Name').fill('Main desk');
    await page.getByLabel('Monthly signal quota').last().fill('1000');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Main desk' }).waitFor();
  });

  it('creates an agent and shows its token once', async () => {
    await go('agents');
    await page.getByRole('button', { name: 'Create agent' }).click();
    const once = page.getByRole('region', { name: /^Token for paper/ });
    agentToken = await once.getByLabel('Token', { exact: true }).inputValue();
    expect(agentToken).toMatch(/^sga_/);
    await page.getByRole('article').filter({ hasText: 'paper' }).waitFor();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await expect.poll(() => page.content()).not.toContain(agentToken);
    await page.reload();
    await page.getByRole('article').first().waitFor();
    expect(await page.content()).not.toContain(agentToken);
  });

  it('creates a source and shows its inbound URL once, to copy; its card then shows only the key hint', async () => {
    await go('sources');
    await page.getByRole('button', { name: 'Create source' }).click();
    const once = page.getByRole('region', { name: /^Inbound URL for TradingView/ });
    const url = await once.getByLabel('Inbound URL', { exact: true }).inputValue();
    expect(url).toMatch(/^http:\/\/signals\.example\.test\/api\/inbound\/[\w-]+$/);
    await once.getByRole('button', { name: 'Copy Inbound URL' }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(url);
    const card = page.getByRole('article').filter({ hasText: 'TradingView' });
    const key = url.split('/').pop()!;
    expect(await card.locator('.key-hint').textContent()).toContain(`${key.slice(0, 4)}…`);
    expect(await card.getByLabel('TradingView alert message', { exact: true }).inputValue()).toBe(
      '{{ticker}},position{{strategy.market_position}},vol_pctbal_loss=1,sl_pips=20,tp_pips=40',
    );
    inboundPath = new URL(url).pathname;
    await page.reload();
    await page.getByRole('article').filter({ hasText: 'TradingView' }).waitFor();
    expect(await page.content()).not.toContain(key);
  });

  it('shows a signal sent over HTTP within seconds, without a reload, and what the paper agent made of it', async () => {
    await go('signals');
    await page.locator('.live', { hasText: 'live' }).waitFor();

    const accepted = await post(inboundPath, 'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40');
    expect(accepted.status).toBe(202);
    const id = ((await accepted.json()) as { id: string }).id;
    openedSignalId = id;
    const row = page.locator(`[data-signal="${id}"]`);
    // No reload and no polling on this page: only the live stream can bring the row; the wait is a hang guard.
    await row.waitFor({ timeout: 30_000 });
    expect(await row.locator('summary').textContent()).toContain('EURUSD buy');
    // Opened while it waits for the agent: the agent's answer updates the row, which stays open.
    await row.locator('summary').click();
    await row.getByText('Normalized').waitFor();
    expect(await row.locator('pre').nth(1).textContent()).toMatch(/"sl": {\s*"type": "pips",\s*"value": 20/);
    const agent = bed.startAgent(bed.server.url, agentToken, agentDir, ['--seed', '1']);
    await agent.waitForHandled(1);
    await expect
      .poll(async () => (await row.locator('table').textContent()) ?? '', { timeout: 30_000 })
      .toMatch(/executed.*opened buy 0\.1 EURUSD/);
    expect(await row.getAttribute('open')).not.toBeNull();
    // The agent's timings from its acknowledgement: alert → order and alert → fill.
    expect(await row.locator('thead').textContent()).toContain('Alert → orderAlert → fill');
    const cells = row.locator('tbody tr td');
    expect(await cells.nth(4).textContent()).toMatch(/^\d+ ms$/);
    expect(await cells.nth(5).textContent()).toMatch(/^\d+ ms$/);
    // The agents test shows the account this agent publishes, and the agent is stopped after
    // this test. Its snapshots are spaced (at most one each 250 ms), so the one holding the
    // position can trail the acknowledgement: wait until the server has it.
    await expect
      .poll(
        async () => {
          const { agents } = (await bed.server.admin('GET', '/api/admin/agents')).body as {
            agents: Array<{ name: string; state: { positions?: Array<{ symbol: string }> } | null }>;
          };
          return agents.find((a) => a.name === 'paper')?.state?.positions?.map((p) => p.symbol) ?? [];
        },
        { timeout: 30_000 },
      )
      .toEqual(['EURUSD']);
  });

  it("shows a rejected signal's reason with its did-you-mean", async () => {
    const refused = await post(inboundPath, 'EURUSD,buy,vol=0.1,sl_pip=20');
    expect(refused.status).toBe(422);
    const id = ((await refused.json()) as { signalId?: string; id?: string }).signalId;
    const row = id
      ? page.locator(`[data-signal="${id}"]`)
      : page.locator('details.signal').filter({ hasText: 'UNKNOWN_PARAMETER' });
    await row.first().waitFor({ timeout: 30_000 });
    await row.first().locator('summary').click();
    await row.first().getByText('did you mean sl_pips').waitFor();
    await shot('signals');
    await shot('signals', PHONE);
  });

  it("shows the agent's balance, equity and open positions from its state", async () => {
    await go('agents');
    const card = page.getByRole('article').filter({ hasText: 'paper' });
    await card.getByText('connected').waitFor();
    // The account the paper agent published before it stopped (the test before waited for it).
    await card.getByRole('table').filter({ hasText: 'Open positions (1)' }).waitFor({ timeout: 30_000 });
    expect(await card.getByRole('table').textContent()).toMatch(/EURUSD\s*buy\s*0\.1/);
    await card.getByText('Balance').waitFor();
    await shot('agents');
    await shot('agents', PHONE);
  });

  it("shows the ledger's trades with their statistics, equity curve and sources, each linked to its signals", async () => {
    // The paper agent started again on its account: the long it opened is closed by a signal.
    const agent = bed.startAgent(bed.server.url, agentToken, agentDir, ['--seed', '1']);
    await agent.connected();
    expect((await post(inboundPath, 'EURUSD,closelong')).status).toBe(202);
    await agent.waitForHandled(1);
    await go('trades');
    const row = page.locator('table.trades tbody tr').first();
    // The agent reports its fills after its journal write: the page shows them once recorded.
    await expect
      .poll(
        async () => {
          await page.getByLabel('Symbol').fill('eurusd');
          await page
            .getByRole('search')
            .evaluate((form) => (form as unknown as { requestSubmit(): void }).requestSubmit());
          if ((await page.locator('table.trades').count()) === 0) return '';
          return `${await row.textContent()} | ${await page.locator('dl.figures').textContent()}`;
        },
        { timeout: 30_000 },
      )
      // Closed by the signal: one closed trade in the statistics, none open.
      .toMatch(/EURUSD\s*long\s*0\.1\s*1\.\d+.*opening closing \| Net profit.*Trades1Win rate/);
    expect(await row.locator('td').nth(5).textContent()).not.toBe('open');
    await page.locator('figure.equity canvas').first().waitFor();
    expect(await page.locator('table.per-source tbody').textContent()).toMatch(/^TradingView/);
    expect(await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href')).toMatch(
      /^\/api\/admin\/ledger\/trades\.csv\?accountId=acc_.*&symbol=eurusd$/,
    );
    await shot('trades');
    await row.getByRole('link', { name: 'opening' }).click();
    await page.getByRole('heading', { level: 1, name: 'Signal log' }).waitFor();
    const linked = page.getByRole('region', { name: 'Linked signal' }).locator(`[data-signal="${openedSignalId}"]`);
    await linked.getByText('Normalized').waitFor();
  });

  it('deactivates and activates a source, and rotates its key after a confirmation', async () => {
    await go('sources');
    const card = page.getByRole('article').filter({ hasText: 'TradingView' });
    await card.getByRole('button', { name: 'Deactivate' }).click();
    await card.getByText('inactive').waitFor();
    expect((await post(inboundPath, 'EURUSD,buy,vol=0.1')).status).toBe(401);
    await card.getByRole('button', { name: 'Activate' }).click();
    await card.getByText('active', { exact: true }).waitFor();

    // Cancelled: nothing changes.
    await card.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect(await card.getByRole('region').count()).toBe(0);
    expect(await card.locator('.key-hint').textContent()).toContain(`${inboundPath.split('/').pop()!.slice(0, 4)}…`);

    await card.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate key' }).click();
    await card.getByText('Key rotated').waitFor();
    const shown = card.getByRole('region', { name: /^New inbound URL for TradingView/ });
    const rotated = new URL(await shown.getByLabel('Inbound URL', { exact: true }).inputValue()).pathname;
    expect(await card.locator('.key-hint').textContent()).toContain(`${rotated.split('/').pop()!.slice(0, 4)}…`);
    expect(rotated).not.toBe(inboundPath);
    expect((await post(inboundPath, 'EURUSD,buy,vol=0.1')).status).toBe(401);
    expect((await post(rotated, 'EURUSD,closebuy')).status).toBe(202);
    inboundPath = rotated;
    await shot('sources');
    await shot('sources', PHONE);
  });

  it('rotates the agent token after a confirmation: the old one is refused at once', async () => {
    await go('agents');
    const card = page.getByRole('article').filter({ hasText: 'paper' });
    await card.getByRole('button', { name: 'Rotate token' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate token' }).click();
    const fresh = await page
      .getByRole('region', { name: /^New token for paper/ })
      .getByLabel('Token', { exact: true })
      .inputValue();
    expect(fresh).toMatch(/^sga_/);
    expect(fresh).not.toBe(agentToken);
    const poll = (token: string) =>
      fetch(`${bed.server.url}/api/agent/signals`, { headers: { authorization: `Bearer ${token}` } });
    expect((await poll(agentToken)).status).toBe(401);
    expect((await poll(fresh)).status).not.toBe(401);
  });

  it("shows the account's usage this month and its signals per day", async () => {
    await go('accounts');
    const card = page.getByRole('article').filter({ hasText: 'Main desk' });
    await card.getByText(/Usage \d{4}-\d{2}: 3 of 1000 signals/).waitFor();
    await card.locator('canvas').first().waitFor();
    await shot('accounts');
  });

  it("sets an account's risk rules, halts it after a confirmation and releases it, each in the audit log", async () => {
    await go('risk');
    const rules = page.getByLabel('Account rules');
    await rules.fill('{"maxLotsPerOrder": 2, "maxDailyLoss": {"percent": 5}}');
    await page.locator('.rules-form').first().getByRole('button', { name: 'Save rules' }).click();
    await page.getByText(/^In force: .*"maxLotsPerOrder":2/).waitFor();
    await page.getByLabel('Reason').fill('strategy misfiring');
    await page.getByRole('button', { name: 'Halt account' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Halt' }).click();
    await page.getByText(/^Halted account acc_/).waitFor();
    const audit = page.locator('table.audit');
    await audit.getByText('halted', { exact: true }).waitFor();
    expect(await audit.locator('tbody tr').first().textContent()).toMatch(/dashboard session [0-9a-f]{12}halted/);
    await page.getByRole('button', { name: 'Release account' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Release' }).click();
    await page.getByText('Not halted: signals are delivered.').waitFor();
    await audit.getByText('released', { exact: true }).waitFor();
  });

  it('judges a signal as the inbound endpoint does, with the did-you-mean, and stores nothing', async () => {
    await go('checker');
    await page.getByLabel('Signal', { exact: true }).fill('EURUSD,buy,vol=0.1,sl_pip=20');
    await page.getByText("unknown parameter 'sl_pip'; did you mean sl_pips?").waitFor();
    await shot('checker');
    await page.getByLabel('Signal', { exact: true }).fill('{"symbol":"EURUSD","action":"buy","vol":0.1,"sl_pips":20}');
    await page.getByText('Valid (json)').waitFor();
    await shot('checker', PHONE);
  });

  it('checks a TradingView alert message, placeholders and all: what each becomes, and a warning about strategy.order.action', async () => {
    await go('checker');
    await page
      .getByLabel('Signal', { exact: true })
      .fill('{{ticker}},{{strategy.order.action}},vol_pctbal_loss=1,sl_pips=20,tp_pips=40');
    await page
      .getByRole('list', { name: 'Placeholders' })
      .getByText(/becomes BTCUSDT/)
      .waitFor();
    await page
      .getByRole('alert')
      .filter({ hasText: /Warning: \{\{strategy\.order\.action\}\} is buy or sell for every order of a strategy/ })
      .waitFor();
    expect(await page.getByText('malformed JSON').count()).toBe(0);
    // The message the sources page hands out: valid as long, short and flat, without a warning.
    await page
      .getByLabel('Signal', { exact: true })
      .fill('{{ticker}},position{{strategy.market_position}},vol_pctbal_loss=1,sl_pips=20,tp_pips=40');
    await page.getByText('BTCUSDT,positionflat,vol_pctbal_loss=1,sl_pips=20,tp_pips=40').waitFor();
    await page.getByText('Valid (text)').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('adds a notification channel, sends a test, shows its messages, and removes it', async () => {
    const receivers = await new NotificationReceivers().start();
    try {
      await go('notifications');
      await page.getByLabel('Kind').selectOption('webhook');
      await page.getByLabel('Name', { exact: true }).fill('pager');
      await page.getByLabel('URL', { exact: true }).fill(`${receivers.url}/hook`);
      await page.getByRole('button', { name: 'Add channel' }).click();
      const card = page.getByRole('article').filter({ hasText: 'pager' });
      await card.getByText('secrets kept: url').waitFor();
      expect(await page.content()).not.toContain(`${receivers.url}/hook`);
      await card.getByRole('button', { name: 'Send a test' }).click();
      await card.getByText('Test sent through pager.').waitFor();
      expect(receivers.of('webhook')[0]!.body).toMatchObject({ event: 'test' });
      // A refusal goes through the outbox: the card's table shows it sent, with its attempts.
      expect((await post(inboundPath, 'EURUSD,buy,vol=0.1,sl=20')).status).toBe(422);
      const row = card.getByRole('row').filter({ hasText: 'signal_refused' });
      await expect.poll(() => row.textContent(), { timeout: 15_000 }).toMatch(/^signal_refusedsent1–1/);
      await card.getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Remove channel' }).click();
      await page.getByText('No channels yet: add one below.').waitFor();
    } finally {
      await receivers.close();
    }
  });

  it('is reachable by keyboard: the sections and the sign-out are tab stops', async () => {
    await go('accounts');
    await page.reload();
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    const focused = await page.evaluate('document.activeElement?.textContent');
    expect(focused).toBe('Accounts');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor();
  });

  it('signs out: the session ends on the server too', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect(await browser.context.cookies()).toEqual([]);
    const after = await page.evaluate("fetch('/api/admin/accounts').then((r) => r.status)");
    expect(after).toBe(401);
    // No script or style was refused by the policy on the way.
    expect(browser.errors.filter((e) => /Content Security Policy|Refused to/.test(e))).toEqual([]);
  });
});
