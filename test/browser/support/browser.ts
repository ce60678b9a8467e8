import AxeBuilder from '@axe-core/playwright';
import { copyFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

const ROOT = join(__dirname, '..', '..', '..');
/** Every page's screenshots, at both widths: CI keeps them as artifacts (gitignored). */
export const ARTIFACTS = join(ROOT, 'artifacts', 'portal');
/** The few docs/portal.md shows, copied there when PORTAL_DOCS_IMAGES=1 (committed: run it when the pages change). */
const DOCS_IMAGES = join(ROOT, 'docs', 'images');
const IN_DOCS = new Set([
  'sign-in-phone',
  'balance-desktop',
  'balance-phone',
  'invoices-phone',
  'usage-desktop',
  'usage-phone',
  'ticket-phone',
  'profile-desktop',
]);

export const DESKTOP = { width: 1024, height: 768 };
export const PHONE = { width: 375, height: 740 };

/** Debian's Chromium (CHROMIUM_PATH elsewhere), headless, with nothing of its own phoning home. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A loopback port free at the time of asking (the app's PUBLIC_BASE_URL must name it before the app starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What the page complained of: script errors, failed loads, Content-Security-Policy refusals. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      problems.push(`console ${message.type()}: ${message.text()}`);
    }
  });
  return problems;
}

/** axe-core on the page as it is: WCAG 2.1 A and AA and best practices; the serious and critical findings. */
export async function seriousViolations(page: Page, name: string): Promise<string[]> {
  const result = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
    .analyze();
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${name}: ${violation.id} (${violation.impact}) ${violation.help}: ` +
        violation.nodes.map((node) => node.target.join(' ')).join(', '),
    );
}

/** Resolves after the page has drawn three more frames (what a resize redraws is drawn by then). */
export function nextFrames(page: Page): Promise<void> {
  return page.evaluate<void>(
    'new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(() => done()))))',
  );
}

/** How much wider than the window the page is (0: no horizontal scroll). */
export function overflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
}

/** The page's screenshot in artifacts/portal/<name>.png, and in docs/images/portal-<name>.png when asked to. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true, animations: 'disabled' });
  if (process.env.PORTAL_DOCS_IMAGES === '1' && IN_DOCS.has(name)) {
    mkdirSync(DOCS_IMAGES, { recursive: true });
    copyFileSync(file, join(DOCS_IMAGES, `portal-${name}.png`));
  }
}

/**
 * The pixels of the canvas drawn in `rgb` (within a small tolerance), counted in the page: bars drawn, not an empty
 * frame of axes. A string, since the test's TypeScript knows no DOM.
 */
export function canvasPixelsOf(
  page: Page,
  selector: string,
  [r, g, b]: [number, number, number],
): Promise<number> {
  return page.evaluate<number>(`(() => {
    const canvas = document.querySelector(${JSON.stringify(selector)});
    if (!canvas || !canvas.width) return 0;
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let count = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (Math.abs(data[i] - ${r}) < 8 && Math.abs(data[i + 1] - ${g}) < 8 && Math.abs(data[i + 2] - ${b}) < 8 && data[i + 3] > 200) count++;
    }
    return count;
  })()`);
}
