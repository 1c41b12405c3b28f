/**
 * The bench drivers' one HTTP client: a GET over a keep-alive agent with one socket, answering
 * status, Location, the cookies set (name=value) and the body; and the median of a sample.
 */
import { Agent, request } from 'node:http';

/** One keep-alive socket for every request of a driver. */
export const benchAgent = new Agent({ keepAlive: true, maxSockets: 1 });

/** What a GET answered. */
export interface Answer {
  status: number;
  location: string;
  cookies: string[];
  body: string;
}

/** GET `path` on 127.0.0.1:`port`, with `cookie` when given. */
export function get(port: number, path: string, cookie?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, agent: benchAgent, headers: cookie === undefined ? {} : { cookie } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            location: String(res.headers.location ?? ''),
            cookies: (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0] ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The median of `xs`. */
export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
