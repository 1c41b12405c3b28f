/**
 * The example app's pages: plain, accessible HTML with a little inline CSS and no framework.
 * Every value placed in a page goes through {@link escapeHtml}.
 */

/** Escape text for use in HTML content and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * Mask a national identity number for display: keep the first character and the last four,
 * hide the rest (`S1234567D` becomes `S****567D`). Short values are hidden entirely.
 */
export function maskNric(nric: string): string {
  if (nric.length < 6) return '*'.repeat(nric.length);
  return nric[0] + '*'.repeat(nric.length - 5) + nric.slice(-4);
}

/** Format a `YYYY-MM-DD` date as e.g. "17 May 2031"; other text is returned as is. */
export function formatDate(isoDate: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(isoDate)) return isoDate;
  const date = new Date(`${isoDate}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return isoDate;
  return new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }).format(
    date,
  );
}

/** The signed-in user as the example app keeps it in the session. */
export interface ProfileUser {
  /** Pairwise subject identifier: this person, for this app. */
  sub: string;
  /** Decrypted attributes by scope name. */
  data: Record<string, string>;
}

const STYLE = `
  :root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --brand: #0b5cad; --line: #d0d7de; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f8fa; }
  header, main, footer { max-width: 40rem; margin: 0 auto; padding: 1rem 1.25rem; }
  header { display: flex; align-items: center; justify-content: space-between; }
  header a { color: inherit; text-decoration: none; font-weight: 600; }
  main { background: #fff; border: 1px solid var(--line); border-radius: 8px; }
  h1 { font-size: 1.5rem; margin: .25rem 0 1rem; }
  p { margin: 0 0 1rem; }
  .button { display: inline-block; font: inherit; font-weight: 600; padding: .6rem 1.2rem; border-radius: 6px;
            border: 1px solid var(--brand); background: var(--brand); color: #fff; text-decoration: none; cursor: pointer; }
  .button.secondary { background: #fff; color: var(--brand); }
  .button:focus-visible { outline: 3px solid #f0b400; outline-offset: 2px; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .5rem 1rem; margin: 0 0 1.5rem; }
  dt { color: var(--muted); }
  dd { margin: 0; overflow-wrap: anywhere; }
  code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
  .notice { border-left: 4px solid #bf8700; padding: .5rem 1rem; background: #fff8c5; }
  footer { color: var(--muted); font-size: .875rem; }
`;

function layout(title: string, body: string, signedIn = false): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Example relying party</title>
<style>${STYLE}</style>
</head>
<body>
<header><a href="/">Example relying party</a>${signedIn ? '<a href="/profile">Your profile</a>' : ''}</header>
<main>
${body}
</main>
<footer>A demonstration of <code>passport-nd-id</code>: signing in with the national digital identity service.</footer>
</body>
</html>
`;
}

/** Home page: a Log in button, or a link to the profile when already signed in. */
export function homePage(user?: ProfileUser): string {
  if (user) {
    const name = user.data['profile.name'];
    return layout(
      'Home',
      `<h1>Welcome back${name ? `, ${escapeHtml(name)}` : ''}</h1>
<p>You are signed in.</p>
<p><a class="button" href="/profile">See your profile</a></p>
${logoutForm()}`,
      true,
    );
  }
  return layout(
    'Home',
    `<h1>Sign in with your digital identity</h1>
<p>Log in by scanning a QR code with your identity app. This site receives only the details you agree to share.</p>
<p><a class="button" href="/auth/login?returnTo=%2Fprofile">Log in</a></p>`,
  );
}

function logoutForm(): string {
  return `<form method="post" action="/auth/logout"><button class="button secondary" type="submit">Log out</button></form>`;
}

/** Profile page: the decrypted attributes (identity number partly masked) and the pairwise `sub`. */
export function profilePage(user: ProfileUser): string {
  const name = user.data['profile.name'];
  const nric = user.data['profile.nric_number'];
  const expiry = user.data['profile.passport_expiry_date'];
  const row = (label: string, content: string | undefined): string =>
    `<dt>${label}</dt><dd>${content ?? '<span aria-label="not shared">—</span>'}</dd>`;
  return layout(
    'Your profile',
    `<h1>Your profile</h1>
<dl>
${row('Name', name === undefined ? undefined : `<span data-field="name">${escapeHtml(name)}</span>`)}
${row('Identity number', nric === undefined ? undefined : `<span data-field="nric">${escapeHtml(maskNric(nric))}</span>`)}
${row(
  'Passport expires',
  expiry === undefined
    ? undefined
    : `<time data-field="passport-expiry" datetime="${escapeHtml(expiry)}">${escapeHtml(formatDate(expiry))}</time>`,
)}
${row('Your id for this site', `<code data-field="sub">${escapeHtml(user.sub)}</code>`)}
</dl>
${logoutForm()}`,
    true,
  );
}

/** 503 page: the session store cannot be reached. */
export function unavailablePage(): string {
  return layout(
    'Temporarily unavailable',
    `<h1>Temporarily unavailable</h1>
<p class="notice" role="alert">We cannot reach our session store right now, so we cannot tell whether you are signed in.</p>
<p>This is usually brief. Please try again in a moment.</p>
<p><a class="button" href="/">Try again</a></p>`,
  );
}

/** Generic error page: no details, no stack trace. */
export function errorPage(title: string, message: string): string {
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p role="alert">${escapeHtml(message)}</p>
<p><a class="button" href="/">Back to the home page</a></p>`,
  );
}

/** 404 page. */
export function notFoundPage(): string {
  return errorPage('Page not found', 'There is no page at this address.');
}
