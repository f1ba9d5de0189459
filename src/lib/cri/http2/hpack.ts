/**
 * HPACK (RFC 7541) as a gRPC client needs it: a full decoder (static and dynamic tables, size
 * updates, eviction, Huffman strings), since runtimes index and compress what they send, and the
 * simplest valid encoder (literals without indexing, no Huffman), since a request's few headers
 * gain little from compression and an encoder that never indexes cannot disagree with the peer's table.
 */
import {STATIC_TABLE} from './hpack-tables.js'
import {HpackError, huffmanDecode} from './huffman.js'

export {HpackError} from './huffman.js'

export type HeaderField = readonly [name: string, value: string]

/** Section 4.1: an entry's size is its name's and value's octets plus 32. */
const ENTRY_OVERHEAD = 32
/** HTTP/2's default SETTINGS_HEADER_TABLE_SIZE, which podctl never changes. */
export const DEFAULT_TABLE_BYTES = 4096
/** No integer a sane header block carries comes near this; a longer one is an attack or garbage. */
const MAX_INTEGER = 2 ** 31 - 1

/** The dynamic table (section 2.3.2): newest first, evicting the oldest when over its size. */
class DynamicTable {
  private readonly entries: HeaderField[] = []
  private bytes = 0

  constructor(private maxBytes: number) {}

  get length(): number {
    return this.entries.length
  }

  /** 0 is the newest entry. */
  at(index: number): HeaderField | undefined {
    return this.entries[index]
  }

  add(field: HeaderField): void {
    const size = entrySize(field)
    // An entry larger than the table empties it and is not added (section 4.4).
    this.entries.unshift(field)
    this.bytes += size
    this.evictTo(this.maxBytes)
  }

  resize(maxBytes: number): void {
    this.maxBytes = maxBytes
    this.evictTo(maxBytes)
  }

  /** What the table holds, for tests: [name, value] newest first, and its size. */
  snapshot(): {fields: HeaderField[]; bytes: number} {
    return {fields: [...this.entries], bytes: this.bytes}
  }

  private evictTo(maxBytes: number): void {
    while (this.bytes > maxBytes) this.bytes -= entrySize(this.entries.pop()!)
  }
}

function entrySize([name, value]: HeaderField): number {
  // Strings are decoded as latin1: one character per octet.
  return name.length + value.length + ENTRY_OVERHEAD
}

/** A cursor over one header block. */
class BlockReader {
  offset = 0

  constructor(private readonly block: Uint8Array) {}

  get done(): boolean {
    return this.offset >= this.block.length
  }

  peek(): number {
    return this.block[this.offset]
  }

  /** Section 5.1: an N-bit prefix integer, continued in 7-bit groups while the prefix is full. */
  integer(prefixBits: number): number {
    const mask = (1 << prefixBits) - 1
    let value = this.byte() & mask
    if (value < mask) return value
    for (let shift = 0; ; shift += 7) {
      const next = this.byte()
      value += (next & 0x7f) * 2 ** shift
      if (value > MAX_INTEGER) throw new HpackError('integer too large')
      if ((next & 0x80) === 0) return value
    }
  }

  /** Section 5.2: a length-prefixed octet string, Huffman-coded when the H bit is set. */
  string(): string {
    const huffman = (this.peek() & 0x80) !== 0
    const length = this.integer(7)
    if (this.offset + length > this.block.length) throw new HpackError('string runs past the header block')
    const raw = this.block.subarray(this.offset, this.offset + length)
    this.offset += length
    return (huffman ? huffmanDecode(raw) : Buffer.from(raw.buffer, raw.byteOffset, raw.length)).toString('latin1')
  }

  private byte(): number {
    if (this.done) throw new HpackError('header block ends inside an integer')
    return this.block[this.offset++]
  }
}

/** One connection's decoder: its dynamic table lives as long as the connection. */
export class HpackDecoder {
  private readonly table: DynamicTable

  /** `maxTableBytes`: the SETTINGS_HEADER_TABLE_SIZE podctl advertised (the default unless a test says otherwise). */
  constructor(private readonly maxTableBytes = DEFAULT_TABLE_BYTES) {
    this.table = new DynamicTable(maxTableBytes)
  }

  /** The fields of one complete header block (HEADERS plus its CONTINUATIONs), in order. */
  decode(block: Uint8Array): HeaderField[] {
    const reader = new BlockReader(block)
    const fields: HeaderField[] = []
    let mayResize = true
    while (!reader.done) {
      const first = reader.peek()
      if ((first & 0xe0) === 0x20) {
        // Size updates come only first in a block (section 4.2).
        if (!mayResize) throw new HpackError('dynamic table size update after a header field')
        this.resize(reader.integer(5))
        continue
      }

      mayResize = false
      fields.push(this.field(reader, first))
    }

    return fields
  }

  /** What the dynamic table holds, for tests. */
  tableSnapshot(): {fields: HeaderField[]; bytes: number} {
    return this.table.snapshot()
  }

  private field(reader: BlockReader, first: number): HeaderField {
    // Section 6.1: indexed field.
    if (first & 0x80) return this.lookup(reader.integer(7))
    // Section 6.2.1: literal with incremental indexing.
    if (first & 0x40) {
      const field = this.literal(reader, 6)
      this.table.add(field)
      return field
    }

    // Sections 6.2.2 and 6.2.3: literal without indexing, never indexed (the same to a decoder).
    return this.literal(reader, 4)
  }

  private literal(reader: BlockReader, prefixBits: number): HeaderField {
    const index = reader.integer(prefixBits)
    const name = index === 0 ? reader.string() : this.lookup(index)[0]
    return [name, reader.string()]
  }

  private lookup(index: number): HeaderField {
    if (index === 0) throw new HpackError('index 0')
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1]
    const field = this.table.at(index - STATIC_TABLE.length - 1)
    if (!field) throw new HpackError(`index ${index} is past the dynamic table`)
    return field
  }

  private resize(maxBytes: number): void {
    if (maxBytes > this.maxTableBytes) throw new HpackError(`table size update to ${maxBytes} over the ${this.maxTableBytes} allowed`)
    this.table.resize(maxBytes)
  }
}

/** Section 6.2.2 with a new name: 0x00, the name, the value, both as plain (non-Huffman) literals. */
export function encodeHeaders(fields: readonly HeaderField[]): Buffer {
  const parts: Buffer[] = []
  for (const [name, value] of fields) {
    parts.push(Buffer.of(0), encodeString(name), encodeString(value))
  }

  return Buffer.concat(parts)
}

function encodeString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1')
  return Buffer.concat([encodeInteger(bytes.length, 7, 0), bytes])
}

/** Section 5.1, the other way: `flags` are the bits above the prefix in the first byte. */
export function encodeInteger(value: number, prefixBits: number, flags: number): Buffer {
  const mask = (1 << prefixBits) - 1
  if (value < mask) return Buffer.of(flags | value)
  const bytes = [flags | mask]
  let rest = value - mask
  while (rest >= 0x80) {
    bytes.push((rest % 0x80) | 0x80)
    rest = Math.floor(rest / 0x80)
  }

  bytes.push(rest)
  return Buffer.from(bytes)
}
