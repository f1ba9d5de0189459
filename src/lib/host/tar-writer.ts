/**
 * Writes a tar archive (pax over ustar, tar-format.ts) to a sink that may push back: each write is
 * awaited, so a file's content goes out chunk by chunk as the reader takes it, never held whole.
 */
import type {Writable} from 'node:stream'

import {encodeHeader, endOfArchive, paddingOf, type TarHeader} from './tar-format.js'

/** Takes bytes; resolves when more may be written. */
export type TarSink = (chunk: Buffer) => Promise<void>

const CHUNK = 1 << 20

/**
 * A sink on a Node stream (stdout, a file, a socket): each write resolves once the stream has taken
 * it (so a slow reader slows the archive down, nothing piles up) and rejects with the stream's error
 * (a full disk, a closed pipe), which would otherwise be thrown at nobody once the write returned.
 */
export function streamSink(stream: Writable): TarSink {
  if (stream.listenerCount('error') === 0) stream.on('error', () => {}) // each write's callback has it
  return async (chunk) =>
    new Promise<void>((resolve, reject) => {
      stream.write(chunk, (error) => (error ? reject(error) : resolve()))
    })
}

export class TarWriter {
  constructor(private readonly sink: TarSink) {}

  async directory(header: Omit<TarHeader, 'type' | 'size' | 'linkname'>): Promise<void> {
    await this.sink(encodeHeader({...header, type: 'directory', size: 0, linkname: ''}))
  }

  async symlink(header: Omit<TarHeader, 'type' | 'size'>): Promise<void> {
    await this.sink(encodeHeader({...header, type: 'symlink', size: 0}))
  }

  /**
   * A regular file of `header.size` bytes, read with `read` (readSync's shape: bytes put in the
   * buffer, 0 at the end). A file that shrank while read is padded with zeros to the size the header
   * announced, as GNU tar does; one that grew is cut there. Resolves to the bytes the file gave.
   */
  async file(header: Omit<TarHeader, 'type' | 'linkname'>, read: (buffer: Buffer, length: number) => number): Promise<number> {
    await this.sink(encodeHeader({...header, type: 'file', linkname: ''}))
    let left = header.size
    while (left > 0) {
      const buffer = Buffer.alloc(Math.min(CHUNK, left))
      const got = read(buffer, buffer.length)
      if (got === 0) break
      await this.sink(buffer.subarray(0, got))
      left -= got
    }

    const given = header.size - left
    const zeros = left + paddingOf(header.size)
    for (let pad = zeros; pad > 0; pad -= Math.min(pad, CHUNK)) await this.sink(Buffer.alloc(Math.min(pad, CHUNK)))
    return given
  }

  async end(): Promise<void> {
    await this.sink(endOfArchive())
  }
}
