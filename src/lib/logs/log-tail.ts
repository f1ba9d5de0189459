/**
 * The last lines of a container's CRI log file, for a failure's message (a container that crashed
 * at start): read from the file's end, so a long log costs no more than its tail.
 */
import {open} from 'node:fs/promises'

import {assembleLines, parseLogText} from './cri-log.js'

export const CRASH_LOG_LINES = 5
const TAIL_BYTES = 16 * 1024
const LINE_CHARS = 200

/** Up to `lines` last lines of the log at `path` (each cut at 200 characters); [] when it cannot be read. */
export async function readLogTail(path: string, lines = CRASH_LOG_LINES): Promise<string[]> {
  let text: string
  try {
    const file = await open(path, 'r')
    try {
      const {size} = await file.stat()
      const start = Math.max(0, size - TAIL_BYTES)
      const {buffer, bytesRead} = await file.read(Buffer.alloc(size - start), 0, size - start, start)
      text = buffer.subarray(0, bytesRead).toString('utf8')
      // Reading from the middle of the file: its first, cut line is not a line.
      if (start > 0) text = text.slice(text.indexOf('\n') + 1)
    } finally {
      await file.close()
    }
  } catch {
    return []
  }

  return assembleLines(parseLogText(text).entries)
    .slice(-lines)
    .map((line) => (line.text.length > LINE_CHARS ? `${line.text.slice(0, LINE_CHARS)}…` : line.text))
}
