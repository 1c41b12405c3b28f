/**
 * The QR page's own script in real Chromium (/usr/bin/chromium, driven by playwright-core): it
 * polls under the page's strict CSP and moves the browser on by itself.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProvider, type StartedProvider } from '../helpers/provider.js';
import { MATCH_CHOICES } from '../../src/provider/authorize.js';
import { authorizeQuery, manualClock, pkce, providerOptions } from '../helpers/provider-fixtures.js';

const clock = manualClock();
let browser: Browser;
let rp: Server;
let redirectUri: string;
let started: StartedProvider;

beforeAll(async () => {
  rp = createServer((_req, res) => res.end('callback reached'));
  await new Promise<void>((resolve) => rp.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(rp.address() as AddressInfo).port}/callback`;
  const options = providerOptions({ clock: clock.now, pollIntervalMs: 100 });
  options.clients[0] = { ...options.clients[0]!, redirectUris: [redirectUri] };
  started = await startProvider(options);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
  });
});

afterAll(async () => {
  await browser?.close();
  await started?.close();
  await new Promise<void>((resolve) => rp.close(() => resolve()));
});

async function newPage(viewport?: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext(viewport ? { viewport } : {});
  context.setDefaultTimeout(10_000);
  return context.newPage();
}

async function openQrPage(page: Page): Promise<string> {
  const { challenge } = pkce();
  await page.goto(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge, { redirect_uri: redirectUri })}`);
  const payload = await page.locator('[data-qr-payload]').getAttribute('data-qr-payload');
  expect(payload).toMatch(/\/mobile-app\//);
  return payload ?? '';
}

describe('the QR page in a real browser', () => {
  it('navigates itself to the callback with a code and the state after approval on the phone', async () => {
    const desktop = await newPage();
    const payload = await openQrPage(desktop);
    const phone = await newPage();
    await phone.goto(payload);
    await phone.selectOption('select[name=persona]', 'ben');
    // Approve is not possible before a number is picked (the form's radio group is required).
    await phone.getByRole('button', { name: 'Approve' }).click();
    expect(await phone.locator('#outcome').count()).toBe(0);
    const code = (await desktop.locator('#match-code').textContent()) ?? '';
    expect(code).toMatch(/^\d\d$/);
    await phone.getByRole('radio', { name: code }).check();
    await phone.getByRole('button', { name: 'Approve' }).click();
    await phone.getByText('You approved the sign-in').waitFor();
    await desktop.waitForURL((url) => url.toString().startsWith(redirectUri));
    const back = new URL(desktop.url());
    expect(back.searchParams.get('state')).toBe('state-123');
    expect(back.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('navigates itself to the callback with error=access_denied after denial', async () => {
    const desktop = await newPage();
    const payload = await openQrPage(desktop);
    const phone = await newPage();
    await phone.goto(payload);
    await phone.getByRole('button', { name: 'Deny' }).click();
    await desktop.waitForURL((url) => url.toString().startsWith(redirectUri));
    expect(Object.fromEntries(new URL(desktop.url()).searchParams)).toEqual({
      error: 'access_denied',
      state: 'state-123',
      iss: started.provider.issuer,
    });
  });

  it('a wrong number picked on the phone ends the sign-in, and the QR page says so and offers to start again', async () => {
    const desktop = await newPage();
    const payload = await openQrPage(desktop);
    const code = (await desktop.locator('#match-code').textContent()) ?? '';
    const phone = await newPage();
    await phone.goto(payload);
    const choices = (await phone.evaluate(
      "[...document.querySelectorAll('input[name=match]')].map((e) => e.value)",
    )) as string[];
    expect(choices).toHaveLength(MATCH_CHOICES);
    expect(choices).toContain(code);
    await phone.getByRole('radio', { name: choices.find((c) => c !== code)! }).check();
    await phone.getByRole('button', { name: 'Approve' }).click();
    await phone.getByText('Sign-in stopped').waitFor();
    await desktop.getByText('The number picked on the phone did not match.').waitFor();
    expect(desktop.url()).toContain('/v2/oauth/authorize');
    await desktop.locator('#start-again-mismatch').click();
    await desktop.locator('#match-code').waitFor();
  });

  it('the Cancel link returns to the client with error=access_denied', async () => {
    const desktop = await newPage();
    await openQrPage(desktop);
    await desktop.getByRole('link', { name: 'Cancel' }).click();
    await desktop.waitForURL((url) => url.toString().startsWith(redirectUri));
    expect(Object.fromEntries(new URL(desktop.url()).searchParams)).toEqual({
      error: 'access_denied',
      state: 'state-123',
      iss: started.provider.issuer,
    });
  });

  it('on a phone-sized screen the phone page fills it and the app link is the primary button; on a desktop the phone frame is drawn', async () => {
    const small = await newPage({ width: 390, height: 844 });
    const payload = await openQrPage(small);
    expect(await small.evaluate("getComputedStyle(document.getElementById('cant-scan')).display")).toBe('block');
    expect(await small.evaluate("getComputedStyle(document.getElementById('cant-scan')).backgroundColor")).toBe(
      'rgb(26, 95, 208)',
    );
    await small.goto(payload);
    const box = await small.locator('main').boundingBox();
    expect(box?.width).toBe(390);
    expect(box?.height).toBeGreaterThanOrEqual(844);
    expect(await small.evaluate("getComputedStyle(document.querySelector('main')).borderTopWidth")).toBe('0px');

    const large = await newPage({ width: 1280, height: 800 });
    await large.goto(payload);
    expect(await large.evaluate("getComputedStyle(document.querySelector('main')).borderTopWidth")).toBe('10px');
    expect((await large.locator('main').boundingBox())!.width).toBeLessThan(480);
    expect(await large.locator('#context-device').textContent()).toMatch(/ on Linux$/);
  });

  it('says the code expired and offers to start again', async () => {
    const desktop = await newPage();
    await openQrPage(desktop);
    clock.advance(121);
    await desktop.getByText('This QR code has expired.').waitFor();
    const again = desktop.getByRole('link', { name: 'Start again' });
    expect(await again.isVisible()).toBe(true);
    await again.click();
    await desktop.locator('[data-qr-payload]').waitFor();
    expect(await desktop.getByText('This QR code has expired.').isVisible()).toBe(false);
  });
});
