/**
 * Secrets a user may put in an endpoint URL (`http://user:pass@host/v1`, `...?api-key=...`) or
 * the environment (API keys): the request gets them, nothing we write does. An endpoint is split
 * once into what the SDK sends (a clean URL, a query and an Authorization header) and how it is
 * shown (the URL with every secret replaced by `***`); each secret is remembered so that
 * `redactSecrets` can cut it out of any text (an error message that echoes the URL, say).
 */

const secrets = new Set<string>();

/** Query parameters whose value is a credential (Azure's `api-key`, `key`, `token`, `sig`, ...). */
const SECRET_PARAM = /key|token|secret|pass|sig|auth|credential|session/i;

export interface ParsedEndpoint {
  /** What the SDK is given: no user info, no query. */
  url: string;
  /** Query parameters sent with every request (from the URL as given). */
  query: Record<string, string>;
  /** `Basic ...` when the URL carried `user:pass@`. */
  authorization?: string;
  /** For manifests, response lines and logs: secrets replaced by `***`. */
  display: string;
}

/** Remembers a secret so that redactSecrets cuts it out (short strings are too common to cut). */
function registerSecret(value: string | undefined): void {
  if (value && value.length >= 4) secrets.add(value);
}

/** Splits an endpoint URL into what is sent and what is shown; an unparsable one is shown as given. */
export function parseEndpoint(raw: string): ParsedEndpoint {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { url: raw, query: {}, display: raw };
  }
  const shown = new URL(u.href);
  let authorization: string | undefined;
  if (u.username || u.password) {
    const user = decodeURIComponent(u.username);
    const pass = decodeURIComponent(u.password);
    registerSecret(user);
    registerSecret(pass);
    registerSecret(u.username);
    registerSecret(u.password);
    authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    registerSecret(authorization.slice('Basic '.length));
    shown.username = '***';
    shown.password = '';
  }
  const query: Record<string, string> = {};
  for (const [k, v] of u.searchParams) {
    query[k] = v;
    if (SECRET_PARAM.test(k)) {
      registerSecret(v);
      registerSecret(encodeURIComponent(v));
      shown.searchParams.set(k, '***');
    }
  }
  const clean = new URL(u.href);
  clean.username = '';
  clean.password = '';
  clean.search = '';
  clean.hash = '';
  shown.hash = '';
  return {
    url: clean.href.replace(/\/$/, ''),
    query,
    authorization,
    display: decodeURI(shown.href).replace(/\/$/, ''),
  };
}

/** `text` with every known secret (endpoint credentials, API keys in the environment) cut out. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const name of ['OPENAI_API_KEY', 'GEMINI_API_KEY', 'ANTHROPIC_API_KEY', 'HF_TOKEN']) {
    const k = process.env[name];
    if (k && k.length >= 8) out = out.split(k).join('[redacted]');
  }
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join('***');
  // A server may echo a masked key ("sk-abc***wxyz"); user info in any URL is a credential.
  return out
    .replace(/\b(?:sk-|AIza)[A-Za-z0-9_*.-]{4,}/g, '[redacted]')
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+(?::[^/\s@]*)?@/gi, '$1***@');
}
