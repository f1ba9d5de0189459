/**
 * Reads a tar archive from a stream, entry by entry, without holding a file's content in memory:
 * each entry's body is handed out in the chunks the stream delivers. pax extended headers and GNU
 * long names are applied to the entry they precede; pax global headers are skipped. A truncated
 * archive or a damaged header is a UsageError naming the byte where it went wrong.
 */
import {UsageError} from '../errors.js'
import {BLOCK, decodeHeader, isZeroBlock, paddingOf, parsePax, type RawHeader, type TarHeader, typeOf} from './tar-format.js'

/** Extended headers and long names are held in memory: more than this is no honest archive. */
const MAX_METADATA_BYTES = 1 << 20

/** Bytes from an async stream, read exactly: `read(n)` returns n bytes unless the stream ends first. */
class ByteSource {
  private chunks: Buffer[] = []
  private buffered = 0
  private ended = false
  /** Bytes handed out so far: the offset in the archive of the next one. */
  position = 0

  constructor(private readonly iterator: AsyncIterator<Uint8Array>) {}

  async read(length: number): Promise<Buffer> {
    while (this.buffered < length && !this.ended) await this.pull()
    return this.take(Math.min(length, this.buffered))
  }

  /** Up to `max` bytes, as few as one: what is buffered or the next chunk, never copied together. */
  async readSome(max: number): Promise<Buffer> {
    if (this.buffered === 0 && !this.ended) await this.pull()
    if (this.buffered === 0) return Buffer.alloc(0)
    return this.take(Math.min(max, this.chunks[0].length))
  }

  private async pull(): Promise<void> {
    const next = await this.iterator.next()
    if (next.done) {
      this.ended = true
      return
    }

    const chunk = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength)
    if (chunk.length === 0) return
    this.chunks.push(chunk)
    this.buffered += chunk.length
  }

  private take(length: number): Buffer {
    const parts: Buffer[] = []
    let wanted = length
    while (wanted > 0) {
      const first = this.chunks[0]
      if (first.length <= wanted) {
        parts.push(this.chunks.shift()!)
        wanted -= first.length
      } else {
        parts.push(first.subarray(0, wanted))
        this.chunks[0] = first.subarray(wanted)
        wanted = 0
      }
    }

    this.buffered -= length
    this.position += length
    return parts.length === 1 ? parts[0] : Buffer.concat(parts)
  }
}

/**
 * `stream`, its reading started now rather than at the first use: a child process's stdout that no
 * one reads by the time the child exits is resumed by Node and its data dropped, so a caller that
 * awaits something (finding the container) between spawning `tar -c` and reading would get nothing.
 */
export function readingNow(stream: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const iterator = stream[Symbol.asyncIterator]()
  let first: Promise<IteratorResult<Uint8Array>> | undefined = iterator.next()
  first.catch(() => {}) // rejected later where it is awaited
  const next = async () => {
    const pending = first
    first = undefined
    return pending ?? iterator.next()
  }

  return {[Symbol.asyncIterator]: () => ({next})}
}

export interface TarEntry {
  header: TarHeader
  /** The archive's own type flag, for what podctl does not extract ('3' a character device, '6' a FIFO…). */
  typeFlag: string
  /** The entry's content, in chunks; read it whole (or not at all) before asking for the next entry. */
  body(): AsyncGenerator<Buffer, void, undefined>
}

export class TarReader {
  private readonly source: ByteSource
  /** What the entry before left unread (its body and padding), skipped before the next header. */
  private unread = 0

  constructor(stream: AsyncIterable<Uint8Array>) {
    this.source = new ByteSource(stream[Symbol.asyncIterator]())
  }

  /** Bytes of the archive read so far. */
  get position(): number {
    return this.source.position
  }

  /** The next entry, or undefined at the end of the archive (two zero blocks, or the stream's end between entries). */
  async next(): Promise<TarEntry | undefined> {
    await this.skip(this.unread)
    const extended: Extended = {pax: new Map()}
    for (;;) {
      const at = this.source.position
      const block = await this.source.read(BLOCK)
      if (block.length === 0 || isZeroBlock(block)) return undefined
      if (block.length < BLOCK) throw this.truncated('a header')
      const raw = decodeHeader(block, at)
      if (EXTENDED_FLAGS.has(raw.typeFlag)) {
        applyExtended(extended, raw.typeFlag, await this.metadata(raw.size, at), at)
        continue
      }

      const header = entryHeader(raw, extended, at)
      this.unread = header.size + paddingOf(header.size)
      return {header, typeFlag: raw.typeFlag, body: () => this.body(header.size)}
    }
  }

  private async *body(size: number): AsyncGenerator<Buffer, void, undefined> {
    let left = size
    while (left > 0) {
      const chunk = await this.source.readSome(left)
      if (chunk.length === 0) throw this.truncated(`an entry's content (${size - left} of ${size} bytes there)`)
      left -= chunk.length
      this.unread -= chunk.length
      yield chunk
    }
  }

  private async metadata(size: number, at: number): Promise<Buffer> {
    if (size > MAX_METADATA_BYTES) throw new UsageError(`the extended header at byte ${at} is ${size} bytes, more than podctl reads`)
    const body = await this.source.read(size)
    if (body.length < size) throw this.truncated('an extended header')
    await this.skip(paddingOf(size))
    return body
  }

  private async skip(length: number): Promise<void> {
    for (let left = length; left > 0;) {
      const chunk = await this.source.readSome(left)
      if (chunk.length === 0) throw this.truncated('an entry')
      left -= chunk.length
    }

    this.unread = 0
  }

  private truncated(what: string): UsageError {
    return new UsageError(`the tar archive ends in the middle of ${what}, at byte ${this.source.position}: it is truncated`)
  }
}

/** What extended headers said of the entry that follows them. */
interface Extended {
  pax: Map<string, string>
  longName?: string
  longLink?: string
}

/** pax extended ('x') and global ('g', skipped) headers, and GNU's long name ('L') and long link ('K'). */
const EXTENDED_FLAGS = new Set(['g', 'K', 'L', 'x'])

function applyExtended(extended: Extended, typeFlag: string, body: Buffer, at: number): void {
  const text = () => body.toString('utf8').replace(/\0.*$/s, '')
  if (typeFlag === 'x') extended.pax = parsePax(body, at)
  if (typeFlag === 'L') extended.longName = text()
  if (typeFlag === 'K') extended.longLink = text()
}

/** The entry's header: its block's fields, overridden by the pax records and long names before it. */
function entryHeader(raw: RawHeader, {pax, longName, longLink}: Extended, at: number): TarHeader {
  const name = pax.get('path') ?? longName ?? raw.name
  const type = typeOf(raw.typeFlag, name)
  return {
    name: name.replace(/\/+$/, ''),
    type,
    mode: raw.mode,
    uid: paxNumber(pax, 'uid', at) ?? raw.uid,
    gid: paxNumber(pax, 'gid', at) ?? raw.gid,
    // Directories and links have no content whatever their size field says (GNU tar reads them so).
    size: ['directory', 'hardlink', 'symlink'].includes(type) ? 0 : (paxNumber(pax, 'size', at) ?? raw.size),
    mtime: Math.floor(Number(pax.get('mtime') ?? raw.mtime)) || 0,
    linkname: pax.get('linkpath') ?? longLink ?? raw.linkname,
  }
}

function paxNumber(pax: Map<string, string>, key: string, at: number): number | undefined {
  const text = pax.get(key)
  if (text === undefined) return undefined
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`the pax header before byte ${at} has a ${key} that is not a number ("${text}")`)
  }

  return Number(text)
}
