/**
 * The QR page's own script in real Chromium (/usr/bin/chromium, driven by playwright-core): it
 * polls under the page's strict CSP and moves the browser on by itself.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProvider, type StartedProvider } from '../../src/provider/index.js';
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
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
});

afterAll(async () => {
  await browser?.close();
  await started?.close();
  await new Promise<void>((resolve) => rp.close(() => resolve()));
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
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
    expect(Object.fromEntries(new URL(desktop.url()).searchParams)).toEqual({ error: 'access_denied', state: 'state-123' });
  });

  it('says the code expired and offers to start again', async () => {
    const desktop = await newPage();
    await openQrPage(desktop);
    clock.advance(301);
    await desktop.getByText('This QR code has expired.').waitFor();
    const again = desktop.getByRole('link', { name: 'Start again' });
    expect(await again.isVisible()).toBe(true);
    await again.click();
    await desktop.locator('[data-qr-payload]').waitFor();
    expect(await desktop.getByText('This QR code has expired.').isVisible()).toBe(false);
  });
});
