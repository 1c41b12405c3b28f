/**
 * The stylesheet and the QR page's poll script, compacted at start-up and served under content-hash
 * names (`immutable`), so the CSP allows no inline code; error pages, drawn without a base path,
 * inline the stylesheet, allowed by its hash.
 */
import { createHash } from 'node:crypto';

/** A static stylesheet or script without indentation, line breaks (`joinLines`) and CSS comments, once at start-up. */
function compactStatic(text: string, joinLines: boolean): string {
  const lines = text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return lines.join(joinLines ? '' : '\n');
}

// Every line ends a rule, a declaration or a block: joining the lines changes nothing.
export const STYLE = compactStatic(
  `
  :root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
  body { margin: 0; background: #f2f4f7; color: #1d2433; }
  main { max-width: 32rem; margin: 2rem auto; background: #fff; border-radius: 12px; padding: 1.5rem 2rem;
         box-shadow: 0 1px 4px rgba(0,0,0,.12); }
  main.phone { max-width: 22rem; border: 10px solid #1d2433; border-radius: 28px; }
  h1 { font-size: 1.35rem; margin: 0 0 .75rem; }
  .qr { display: block; margin: 1rem auto; width: 320px; height: 320px; image-rendering: pixelated; background: #fff; }
  .muted { color: #5b6475; font-size: .9rem; }
  .error-code { font-family: ui-monospace, monospace; background: #fdecec; color: #8a1c1c; padding: .1rem .35rem; border-radius: 4px; }
  button { font: inherit; padding: .6rem 1.2rem; border-radius: 8px; border: 1px solid #1d2433; cursor: pointer; }
  button[value=approve] { background: #1a5fd0; color: #fff; border-color: #1a5fd0; }
  select { font: inherit; padding: .4rem; width: 100%; }
  .actions { display: flex; gap: .75rem; margin-top: 1rem; }
  ul { padding-left: 1.25rem; }
  .match { font-size: 1.05rem; }
  .match strong { font-size: 1.6rem; letter-spacing: .1em; font-family: ui-monospace, monospace; }
  .choices { display: grid; grid-template-columns: repeat(4, 1fr); gap: .5rem; margin: .5rem 0 1rem; border: 0; padding: 0; }
  .choices label { text-align: center; border: 1px solid #1d2433; border-radius: 8px; padding: .6rem 0; min-height: 2.75rem;
                   box-sizing: border-box; font-size: 1.3rem; font-family: ui-monospace, monospace; cursor: pointer; }
  .choices input { margin-right: .3rem; }
  .context { background: #f2f4f7; border-radius: 8px; padding: .5rem .75rem; font-size: .9rem; }
  .context dt { font-weight: 600; }
  .context dd { margin: 0 0 .35rem; }
  /* A real phone-sized screen: the page fills it; the drawn phone frame is for desktop viewing only. */
  @media (max-width: 480px) {
    main, main.phone { max-width: none; margin: 0; border: 0; border-radius: 0; box-shadow: none; min-height: 100vh;
                       padding: 1rem; box-sizing: border-box; }
    .qr { width: 240px; height: 240px; }
    .app-link-row .muted { display: none; }
    a.app-link { display: block; text-align: center; background: #1a5fd0; color: #fff; text-decoration: none;
                 padding: .8rem 1.2rem; border-radius: 8px; font-weight: 600; }
  }
  .banner { background: #fff6d6; border: 1px solid #e8cf6a; border-radius: 8px; padding: .5rem .75rem; font-size: .85rem; }
`,
  true,
);

// Line breaks kept: the script relies on them nowhere, but they keep it readable in a browser.
const POLL_SCRIPT = compactStatic(
  `
(function () {
  var cfg = JSON.parse(document.getElementById('qr-config').textContent);
  function show(id) {
    document.getElementById('waiting').hidden = true;
    document.getElementById(id).hidden = false;
  }
  function poll() {
    fetch(cfg.statusUrl, { cache: 'no-store', credentials: 'omit' })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        if ((s.status === 'approved' || s.status === 'denied') && typeof s.redirectTo === 'string') {
          document.getElementById('status').textContent = s.status === 'approved' ? 'Approved. Signing you in\\u2026' : 'Declined. Returning\\u2026';
          window.location.replace(s.redirectTo);
        } else if (s.status === 'expired') {
          show('expired');
        } else if (s.status === 'mismatch') {
          show('mismatch');
        } else {
          setTimeout(poll, cfg.pollIntervalMs);
        }
      })
      .catch(function () { setTimeout(poll, cfg.pollIntervalMs * 2); });
  }
  setTimeout(poll, cfg.pollIntervalMs);
})();
`,
  false,
);

/** A static file of the pages: its path below the base path, media type and bytes. */
export interface StaticAsset {
  readonly path: string;
  readonly type: string;
  readonly body: Buffer;
}

function asset(name: string, extension: string, type: string, text: string): StaticAsset {
  const hash = createHash('sha256').update(text).digest('base64url').slice(0, 16);
  return { path: `/_provider/static/${name}.${hash}.${extension}`, type, body: Buffer.from(text, 'utf8') };
}

/** The shared stylesheet. */
export const STYLESHEET = asset('page', 'css', 'text/css; charset=utf-8', STYLE);
/** The QR page's poll script. */
export const QR_SCRIPT = asset('qr', 'js', 'text/javascript; charset=utf-8', POLL_SCRIPT);
/** The CSP source that allows the stylesheet inlined in a page (error pages). */
export const INLINE_STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;
/** Every static file, for the routes. */
export const STATIC_ASSETS: readonly StaticAsset[] = [STYLESHEET, QR_SCRIPT];
