// Headless Chromium from Debian's package, driven by Playwright (playwright-core: no browser
// download), with a fresh profile (--user-data-dir) per launch, removed at close. Every page
// of the context has its own sessionStorage, so each page signs in by itself.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export async function launchBrowser() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'colltune-chromium-'));
  // Playwright passes the profile as --user-data-dir itself.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
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
    viewport: { width: 1366, height: 900 },
    deviceScaleFactor: 1,
  });
  for (const page of context.pages()) await page.close();
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
