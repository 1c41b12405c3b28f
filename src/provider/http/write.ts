/** The one writer: an {@link Answer} onto a Node `ServerResponse` through its public API. */
import type { ServerResponse } from 'node:http';
import type { Answer } from './answer.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';

/** Writes `answer` on `res`; `head` leaves the body out but keeps its length. Nothing once sent or disconnected. */
export function writeAnswer(res: ServerResponse, answer: Answer, head: boolean): void {
  if (res.headersSent || res.destroyed) {
    if (!res.writableEnded) res.end();
    return;
  }
  if (answer.reset === true) {
    const socket = res.socket as (ServerResponse['socket'] & { resetAndDestroy?: () => void }) | null;
    if (socket && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
    else socket?.destroy();
    return;
  }
  const body = answer.body;
  let text: string | Buffer;
  let type: string | undefined;
  switch (body.type) {
    case 'json':
      text = JSON.stringify(body.value) ?? 'null';
      type = JSON_TYPE;
      break;
    case 'html':
      text = body.html;
      type = HTML_TYPE;
      break;
    case 'bytes':
      text = body.bytes;
      type = body.contentType;
      break;
    default:
      text = '';
      type = undefined;
  }
  const headers = headerList(answer.headers);
  headers.push('Content-Length', String(Buffer.byteLength(text)));
  if (type !== undefined) headers.push('Content-Type', type);
  if (answer.afterWrite !== undefined) res.once('finish', answer.afterWrite);
  res.writeHead(answer.status, headers);
  res.end(head ? undefined : text);
}

/**
 * The flat `[name, value, …]` lists of frozen header sets (every HTML page's security headers),
 * made once each. Node writes a flat list for less than the same headers as an object: with the
 * page's seven headers, about 8 µs of the roughly 40 µs a small answer costs.
 */
const LISTS = new WeakMap<object, readonly string[]>();

/** `headers` as a new flat list, without the two the writer sets from the body. */
function headerList(headers: Readonly<Record<string, string>>): string[] {
  const made = LISTS.get(headers);
  if (made !== undefined) return made.slice();
  const list: string[] = [];
  for (const name of Object.keys(headers))
    if (name !== 'Content-Length' && name !== 'Content-Type') list.push(name, headers[name]!);
  if (Object.isFrozen(headers)) LISTS.set(headers, list.slice());
  return list;
}
