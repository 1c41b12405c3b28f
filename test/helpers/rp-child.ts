/**
 * Runs the apps of rp-apps.ts in a process of their own and prints one line
 * `{"router":"http://…","fetch":"http://…"}` when they listen, so a test can reach them over
 * HTTP and give up on a request (with its own timeout) even if the apps' event loop is stuck.
 * Run with tsx; the test kills it.
 */
import { ADAPTERS, startRpApp } from './rp-apps.js';

async function main(): Promise<void> {
  const urls: Record<string, string> = {};
  for (const adapter of ADAPTERS) {
    // No code is ever redeemed by the tests that use this process: any loopback origin will do.
    const app = await startRpApp(adapter, {
      hostname: 'http://127.0.0.1:9',
      clientId: 'rp-child',
      clientSecret: 'rp-child-secret-0123456789',
    });
    urls[adapter] = app.baseUrl;
  }
  process.stdout.write(`${JSON.stringify(urls)}\n`);
}

void main();
