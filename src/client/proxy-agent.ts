/**
 * An `https.Agent` tunnelling through an HTTP proxy's CONNECT, from `HTTPS_PROXY`/`NO_PROXY`;
 * opt-in. Small on purpose, so there is no run-time proxy dependency; for SOCKS or PAC give
 * `agent` a maintained proxy agent.
 */
import type * as https from 'node:https';
import type { Duplex } from 'node:stream';
import type * as tls from 'node:tls';

/** Options of {@link proxyAgentFromEnv}: those of `https.Agent` (e.g. `ca`), plus where to read the settings. */
export interface ProxyAgentFromEnvOptions extends https.AgentOptions {
  /** Environment to read `HTTPS_PROXY`/`NO_PROXY` from. Default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** Where the tunnel goes: the proxy, and the hosts that bypass it. */
interface ProxySettings {
  proxy: URL;
  authorization: string | undefined;
  noProxy: string[];
}

/**
 * An agent for IdClient's `agent` option that honours `HTTPS_PROXY` (an `http://` proxy URL,
 * credentials allowed) and `NO_PROXY` (comma-separated hosts or domain suffixes, optional
 * `:port`, or `*`). Without `HTTPS_PROXY` it connects directly. For `https:` service origins.
 * @throws TypeError when `HTTPS_PROXY` is not an `http://` URL.
 */
export function proxyAgentFromEnv(options: ProxyAgentFromEnvOptions = {}): https.Agent {
  const { env = process.env, ...agentOptions } = options;
  const raw = env['HTTPS_PROXY'] ?? env['https_proxy'];
  const settings =
    raw === undefined || raw.trim() === '' ? undefined : parseSettings(raw, env['NO_PROXY'] ?? env['no_proxy'] ?? '');
  const TunnelAgent = (tunnelAgentClass ??= defineTunnelAgent());
  return new TunnelAgent({ keepAlive: true, ...agentOptions }, settings);
}

function parseSettings(raw: string, noProxy: string): ProxySettings {
  let proxy: URL;
  try {
    proxy = new URL(raw.trim());
  } catch {
    throw new TypeError('proxyAgentFromEnv: HTTPS_PROXY must be a URL like http://proxy.internal:3128');
  }
  if (proxy.protocol !== 'http:') {
    throw new TypeError(
      'proxyAgentFromEnv: HTTPS_PROXY must be an http:// proxy URL (the tunnel inside it is TLS to the service)',
    );
  }
  const authorization =
    proxy.username === ''
      ? undefined
      : `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`;
  const entries = noProxy
    .split(/[\s,]+/)
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '');
  return { proxy, authorization, noProxy: entries };
}

/** True when `host:port` is listed in NO_PROXY (exact host, a domain suffix, or `*`). */
export function bypassesProxy(noProxy: readonly string[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return noProxy.some((entry) => {
    if (entry === '*') return true;
    const m = /^(.*?)(?::(\d+))?$/.exec(entry);
    const name = (m?.[1] ?? entry).replace(/^\[|\]$/g, '').replace(/^\*?\./, '.');
    if (m?.[2] !== undefined && Number(m[2]) !== port) return false;
    if (name.startsWith('.')) return h.endsWith(name) || h === name.slice(1);
    return h === name || h.endsWith(`.${name}`);
  });
}

type ConnectCallback = (err: Error | null, socket: Duplex) => void;

/** Time a proxy has to open the tunnel when neither the request nor the agent sets a timeout: 30 s. */
export const DEFAULT_TUNNEL_TIMEOUT_MS = 30_000;
const TUNNEL_GRACE_MS = 50;

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

type TunnelAgentClass = new (options: https.AgentOptions, settings: ProxySettings | undefined) => https.Agent;
let tunnelAgentClass: TunnelAgentClass | undefined;

/**
 * The agent's class, made on first use: node:http, node:https and node:tls are most of the
 * client's import cost, and only an app behind a proxy needs them here.
 */
function defineTunnelAgent(): TunnelAgentClass {
  const http = process.getBuiltinModule('node:http');
  const https = process.getBuiltinModule('node:https');
  const tls = process.getBuiltinModule('node:tls');
  class TunnelAgent extends https.Agent {
    readonly #settings: ProxySettings | undefined;

    constructor(options: https.AgentOptions, settings: ProxySettings | undefined) {
      super(options);
      this.#settings = settings;
    }

    override createConnection(
      options: https.RequestOptions & tls.ConnectionOptions,
      callback?: ConnectCallback,
    ): Duplex | undefined {
      const settings = this.#settings;
      const host = options.host ?? options.hostname ?? 'localhost';
      const port = Number(options.port ?? 443);
      if (settings === undefined || bypassesProxy(settings.noProxy, host, port)) {
        return (
          https.Agent.prototype as unknown as { createConnection(o: unknown, cb?: ConnectCallback): Duplex }
        ).createConnection.call(this, options, callback);
      }
      const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      const headers: Record<string, string> = { Host: target };
      if (settings.authorization !== undefined) headers['Proxy-Authorization'] = settings.authorization;
      const connect = http.request({
        host: settings.proxy.hostname.replace(/^\[|\]$/g, ''),
        port: settings.proxy.port === '' ? 80 : Number(settings.proxy.port),
        method: 'CONNECT',
        path: target,
        headers,
        agent: false,
      });
      let done = false;
      const fail = (message: string, code: string): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        callback?.(Object.assign(new Error(message), { code }), undefined as unknown as Duplex);
      };
      // A proxy that never answers must not keep the socket: the CONNECT gets the request's timeout
      // plus a grace, so the request reports its own timeout first.
      const limit =
        (positive(options.timeout) ?? positive(this.options.timeout) ?? DEFAULT_TUNNEL_TIMEOUT_MS) + TUNNEL_GRACE_MS;
      const timer = setTimeout(() => {
        fail(`The proxy did not open the tunnel within ${limit} ms.`, 'EPROXYTIMEOUT');
        connect.destroy();
      }, limit);
      connect.once('connect', (res, socket, head) => {
        clearTimeout(timer);
        if (res.statusCode !== 200) {
          socket.destroy();
          fail(`The proxy refused the tunnel (HTTP ${res.statusCode ?? 0}).`, 'EPROXYREFUSED');
          return;
        }
        if (head.length > 0) socket.unshift(head);
        const servername = options.servername ?? (/^[\d.]+$|:/.test(host) ? undefined : host);
        const secure = tls.connect({ ...options, socket, ...(servername === undefined ? {} : { servername }) });
        done = true;
        callback?.(null, secure);
      });
      connect.once('error', (err: NodeJS.ErrnoException) =>
        fail('The proxy could not be reached.', err.code ?? 'EPROXY'),
      );
      connect.end();
      return undefined;
    }
  }
  return TunnelAgent;
}
