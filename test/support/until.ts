/**
 * Polls `check` until it gives a value (anything but undefined or false) and returns it; after
 * `timeoutMs` fails naming `what`. For tests that wait for a condition instead of a fixed time.
 */
export async function until<T>(
  what: string,
  check: () => Promise<T | false | undefined> | T | false | undefined,
  {timeoutMs = 10_000, pollMs = 10}: {timeoutMs?: number; pollMs?: number} = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => {
      setTimeout(resolve, pollMs)
    })
  }
}
