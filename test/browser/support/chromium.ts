import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (installed by `npm test` when missing); playwright never downloads one. */
export const CHROMIUM = '/usr/bin/chromium';

export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Every console error and failed request of the page: a CSP violation shows up here. */
  readonly errors: string[];
  close(): Promise<void>;
}

/**
 * A fresh headless Chromium with a profile of its own (removed on close), offline from the rest
 * of the world: nothing but the server under test is reachable for what it loads.
 */
export async function openBrowser(): Promise<Browser> {
  const profile = mkdtempSync(path.join(tmpdir(), 'signalgate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: DESKTOP,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  return {
    context,
    page,
    errors,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
