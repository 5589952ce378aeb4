/**
 * Credentials must never reach a log line or an error message (issue #3).
 * Everything the adapter prints about a URL or a low-level error goes through
 * these helpers.
 */

/** `http://user:pass@host:5984/p` -> `http://host:5984/p` (userinfo dropped, not masked: nothing to guess from). */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return redactText(url, []);
  }
};

/**
 * Remove userinfo from any URL-looking text, `AuthSession=` cookie values,
 * `Basic ...` headers, and every given secret verbatim (passwords, cookies).
 */
export const redactText = (text: string, secrets: readonly string[]): string => {
  let out = text
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, "$1")
    .replace(/AuthSession=[^;\s"]*/g, "AuthSession=<redacted>")
    .replace(/(Basic|Bearer)\s+[A-Za-z0-9+/=._-]+/g, "$1 <redacted>");
  for (const secret of secrets) {
    if (secret.length >= 3) out = out.split(secret).join("<redacted>");
  }
  return out;
};
