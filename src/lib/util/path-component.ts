/**
 * How long one path component may be, and text cut to fit. Kept apart from file-names.ts (whose
 * digest needs node:crypto) because the log directory of every pod is named with it: listing
 * commands build those names and must not load crypto to do so.
 */

/** NAME_MAX of ext4, xfs, btrfs and tmpfs: the most bytes one path component may have. */
export const NAME_MAX = 255

/** The longest start of `text` of at most `bytes` bytes in UTF-8 (never half a character). */
export function cutToBytes(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text
  let out = ''
  for (const char of text) {
    if (Buffer.byteLength(out + char) > bytes) break
    out += char
  }

  return out
}
