/**
 * Whether a spinner is drawn: podctl decides from the terminal alone and tells ora so, because ora's
 * own test also turns itself off whenever a `CI` variable is set, which left a terminal with one
 * stale "- Pulling image…" line and no layer bars (`--progress tty` then drew nothing).
 */
export interface SpinnerStream {
  isTTY?: boolean
  columns?: number
}

/**
 * A terminal that reports a width (ora's line counting loops forever on zero-width
 * pseudo-terminals) and can move the cursor (not TERM=dumb).
 */
export function spinnerWanted(stream: SpinnerStream, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && (stream.columns ?? 0) > 0 && env.TERM !== 'dumb'
}
