/** What `podctl run` and the library's run() do when not told otherwise: one place, so they never drift apart. */

/** The deadline of the whole run: image back-off, init containers, waiting. */
export const DEFAULT_RUN_TIMEOUT_MS = 5 * 60_000

/** Pods started at once, and image pulls in flight at once. */
export const DEFAULT_RUN_PARALLEL = 3
