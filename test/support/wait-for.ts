/** Wait until `check` holds (or returns a value), polling; generous timeout, never a timed assertion. */
export const waitFor = async <T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 30_000,
  everyMs = 25,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError === undefined ? "" : `: ${String(lastError)}`}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
};
