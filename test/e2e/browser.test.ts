/**
 * Real Chromium (Debian's /usr/bin/chromium, driven by playwright-core) against the example app
 * and the embedded provider in interactive QR mode: a person signs in on the desktop page by
 * scanning the QR code with a "phone" (a second, phone-sized browser context).
 *
 * Screenshots of the QR page, the phone page and the profile page are saved to test-artifacts/.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jsQR from 'jsqr';
import { DEFAULT_PERSONAS, type Persona } from 'passport-nd-id/provider';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startEmbeddedExample, type RunningEmbeddedExample } from '../../example-app/server.js';
import { maskNric } from '../../example-app/views.js';

const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts');
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

let browser: Browser;
let site: RunningEmbeddedExample;
let dataDir: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const problem = inject('systemPackagesProblem') ?? inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(ARTIFACTS, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), 'example-app-browser-'));
  site = await startEmbeddedExample({ port: 0, dataDir, autoApprove: false, log: () => undefined });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await site?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function newDesktopPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // A wait that cannot succeed fails within the test's time, naming the step that was waiting.
  context.setDefaultTimeout(10_000);
  contexts.push(context);
  return context.newPage();
}

/** axe-core's accessibility violations on the page (rules for WCAG 2.1 A and AA). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: Array<{ id: string; nodes: unknown[] }> }> };
      }
    ).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations.map((v) => `${v.id} (${v.nodes.length})`);
  });
}

/** The phone is another device: its own browser context, phone-sized, sharing nothing with the desktop. */
async function newPhonePage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  context.setDefaultTimeout(10_000);
  contexts.push(context);
  return context.newPage();
}

/** Decode the QR code found in a PNG screenshot, as a phone camera would. */
function decodeQr(png: Buffer): string {
  const image = PNG.sync.read(png);
  const code = jsQR(
    new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length),
    image.width,
    image.height,
  );
  if (!code) throw new Error('No QR code could be decoded from the screenshot of the QR page.');
  return code.data;
}

/** The number each QR page showed, by its scanned URL: what the person reads off the screen. */
const matchCodes = new Map<string, string>();

/**
 * From the home page: click Log in, reach the QR page, screenshot it and decode the QR code from
 * the image. Returns the decoded URL (what a phone would open).
 */
async function startLoginAndScan(page: Page, screenshotName?: string): Promise<string> {
  await page.goto(site.url);
  await page.getByRole('link', { name: 'Log in' }).click();
  await page.waitForURL((url) => url.href.startsWith(`${site.providerUrl}/v2/oauth/authorize`));
  const qr = page.locator('[data-qr-payload]');
  await qr.waitFor({ state: 'visible' });
  const tag = await qr.evaluate((el) => el.tagName.toLowerCase());
  const image = tag === 'img' || tag === 'svg' ? qr : qr.locator('img, svg').first();
  const box = await image.boundingBox();
  expect(box?.width).toBeGreaterThanOrEqual(200);
  await expect(page.getByRole('link', { name: /identity app/i }).count()).resolves.toBeGreaterThan(0);
  const screenshot = await page.screenshot({
    fullPage: true,
    ...(screenshotName ? { path: join(ARTIFACTS, screenshotName) } : {}),
  });
  const decoded = decodeQr(screenshot);
  expect(decoded).toBe(await qr.getAttribute('data-qr-payload'));
  matchCodes.set(decoded, (await page.locator('#match-code').textContent()) ?? '');
  return decoded;
}

/** On the phone: open the scanned URL, pick a person, pick the number shown on the desktop to approve, and answer. */
async function answerOnPhone(
  url: string,
  persona: Persona,
  decision: 'Approve' | 'Deny',
  screenshotName?: string,
): Promise<void> {
  const phone = await newPhonePage();
  await phone.goto(url);
  await phone.locator('select[name="persona"]').selectOption(persona.id);
  if (decision === 'Approve') await phone.getByRole('radio', { name: matchCodes.get(url) ?? '' }).check();
  if (screenshotName) await phone.screenshot({ path: join(ARTIFACTS, screenshotName), fullPage: true });
  await phone.getByRole('button', { name: decision, exact: true }).click();
  await phone.waitForLoadState();
}

describe('signing in with a real browser and the QR code', () => {
  it('scanning the QR code and approving on the phone brings the desktop page to the profile of the chosen person', async () => {
    const persona = DEFAULT_PERSONAS[2]!;
    const page = await newDesktopPage();
    const phoneUrl = await startLoginAndScan(page, 'qr-page.png');
    await answerOnPhone(phoneUrl, persona, 'Approve', 'phone-page.png');

    // Nobody touches the desktop page: it notices the approval and follows through by itself.
    await page.waitForURL(`${site.url}/profile`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Your profile');
    await expect(page.locator('[data-field="name"]').textContent()).resolves.toBe(persona['profile.name']);
    const nric = persona['profile.nric_number'];
    await expect(page.locator('[data-field="nric"]').textContent()).resolves.toBe(maskNric(nric));
    await expect(page.locator('[data-field="passport-expiry"]').getAttribute('datetime')).resolves.toBe(
      persona['profile.passport_expiry_date'],
    );
    const sub = await page.locator('[data-field="sub"]').textContent();
    expect(sub?.length).toBeGreaterThan(0);
    expect(await page.content()).not.toContain(nric);
    await page.screenshot({ path: join(ARTIFACTS, 'profile-page.png'), fullPage: true });
  });

  it('denying on the phone ends on a failure page whose "try again" link starts a new login', async () => {
    const page = await newDesktopPage();
    const phoneUrl = await startLoginAndScan(page);
    await answerOnPhone(phoneUrl, DEFAULT_PERSONAS[0]!, 'Deny');

    await page.waitForURL((url) => url.href.startsWith(`${site.url}/auth/callback`));
    await expect(page.locator('h1').textContent()).resolves.toBe('Sign-in failed');
    await expect(page.locator('main').count()).resolves.toBe(1);
    await expect(page.getByRole('link', { name: 'Go to the home page' }).getAttribute('href')).resolves.toBe('/');
    await expect(axeViolations(page)).resolves.toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'failure-page.png'), fullPage: true });
    const retry = page.getByRole('link', { name: 'Try again' });
    await retry.click();
    await page.waitForURL((url) => url.href.startsWith(`${site.providerUrl}/v2/oauth/authorize`));
    await page.locator('[data-qr-payload]').waitFor({ state: 'visible' });
  });

  it('logging out returns to the home page, and the profile then asks to sign in again', async () => {
    const persona = DEFAULT_PERSONAS[1]!;
    const page = await newDesktopPage();
    await answerOnPhone(await startLoginAndScan(page), persona, 'Approve');
    await page.waitForURL(`${site.url}/profile`);
    await expect(page.locator('[data-field="name"]').textContent()).resolves.toBe(persona['profile.name']);

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(`${site.url}/`);
    await page.getByRole('link', { name: 'Log in' }).waitFor({ state: 'visible' });
    const cookies = await page.context().cookies(site.url);
    expect(cookies.map((c) => c.name)).not.toContain('example-app.sid');

    await page.goto(`${site.url}/profile`);
    await page.waitForURL((url) => url.href.startsWith(`${site.providerUrl}/v2/oauth/authorize`));
  });
});
