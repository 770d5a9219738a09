/**
 * The browser the editor and dashboard suites drive: Debian's Chromium through playwright-core,
 * never a download. `IPCAM_CHROMIUM` points at another Chromium binary.
 *
 * A fresh machine without a browser still passes `npm test`: those suites are skipped with one
 * line saying how to run them. CI sets `IPCAM_REQUIRE_BROWSER=1`, so there a missing browser is a
 * failure and the suites are never skipped silently.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env['IPCAM_CHROMIUM'] ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let told = false;

/**
 * Call first in a suite's `before` hook: skips the suite (mocha `pending`) when there is no
 * browser, or fails when `IPCAM_REQUIRE_BROWSER` is set.
 */
export function needBrowser(ctx: Mocha.Context, suite: string): void {
  if (existsSync(CHROMIUM)) return;
  const how = `install it with "apt-get install -y chromium", or set IPCAM_CHROMIUM to a Chromium binary`;
  if (process.env['IPCAM_REQUIRE_BROWSER']) throw new Error(`Chromium is not at ${CHROMIUM}: ${how} (IPCAM_REQUIRE_BROWSER is set, so the ${suite} tests may not be skipped)`);
  if (!told) {
    told = true;
    console.log(`  (browser tests skipped: no Chromium at ${CHROMIUM}; ${how})`);
  }
  ctx.skip();
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}
