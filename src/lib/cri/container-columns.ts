/**
 * ListContainers' answer read into columns for `ps`'s table: where each printed string lies in the
 * message (a span of its bytes) and its numbers, in typed arrays, with no object or string made per
 * container. A table of 10 000 containers then copies its cells straight from the message; only
 * what a filter or the IMAGE column needs becomes a string (text()). Everything else a Container
 * holds (annotations, other labels) is stepped over, as in summaries.ts.
 */
import type {SlicingBuffer} from './buffer-reader.js'

/** The strings of a container a table may print or filter on, each a span of the message. */
export const Span = {
  id: 0,
  podSandboxId: 1,
  name: 2,
  image: 3,
  userSpecifiedImage: 4,
  imageRef: 5,
  imageId: 6,
  /** The values of the labels asked for, in their order (at most three). */
  label0: 7,
  label1: 8,
  label2: 9,
} as const
const SPANS = 10
const LABELS = 3

export interface ContainerColumns {
  bytes: Buffer
  /** The keys whose values are spans label0, label1, ..., as bytes. */
  labelKeys: readonly Buffer[]
  count: number
  /** Container i's span s: bytes [starts[i * 10 + s], ends[i * 10 + s]); start -1 when the message lacks the field. */
  starts: Int32Array
  ends: Int32Array
  /** The state enum's number and metadata.attempt. */
  states: Int32Array
  attempts: Uint32Array
  /** created_at, an int64, as its high (signed) and low (unsigned) 32 bits. */
  createdHigh: Int32Array
  createdLow: Uint32Array
}

/** A cursor over protobuf varints, kept monomorphic so the scan's loop optimises early. */
class Wire {
  pos = 0
  high = 0

  constructor(readonly bytes: Buffer) {}

  /** A varint's low 32 bits (unsigned); its high 32 bits are left in `high`. */
  varint(): number {
    const {bytes} = this
    let low = 0
    let byte = 0
    for (let shift = 0; shift < 28; shift += 7) {
      byte = bytes[this.pos++]
      low |= (byte & 0x7f) << shift
      if (byte < 0x80) {
        this.high = 0
        return low >>> 0
      }
    }

    byte = bytes[this.pos++]
    low |= (byte & 0x0f) << 28
    let high = (byte & 0x7f) >> 4
    for (let shift = 3; byte >= 0x80 && shift <= 31; shift += 7) {
      byte = bytes[this.pos++]
      high |= (byte & 0x7f) << shift
    }

    if (byte >= 0x80 || this.pos > bytes.length) throw new RangeError('invalid varint')
    this.high = high
    return low >>> 0
  }

  /** Reads a length; where the length-delimited field ends. */
  end(): number {
    const end = this.varint() + this.pos
    if (end > this.bytes.length) throw new RangeError('premature EOF')
    return end
  }

  skip(tag: number): void {
    switch (tag & 7) {
      case 0: {
        this.varint()
        break
      }

      case 1: {
        this.pos += 8
        break
      }

      case 2: {
        this.pos = this.end()
        break
      }

      case 5: {
        this.pos += 4
        break
      }

      default:
        throw new RangeError(`cannot skip wire type ${tag & 7}`)
    }

    if (this.pos > this.bytes.length) throw new RangeError('premature EOF')
  }
}

/**
 * Reads ListContainersResponse (repeated Container containers = 1) into columns, with the values of
 * up to three labels (e.g. the kubelet's pod name). Throws RangeError on a malformed message.
 */
export function readContainerColumns(bytes: Buffer, labelKeys: readonly string[] = []): ContainerColumns {
  if (labelKeys.length > LABELS) throw new RangeError(`at most ${LABELS} label keys`)
  const capacity = estimateCount(bytes)
  let columns = allocate(
    bytes,
    capacity,
    labelKeys.map((key) => Buffer.from(key)),
  )
  const wire = new Wire(bytes)
  while (wire.pos < bytes.length) {
    const tag = wire.varint()
    if (tag !== 10) {
      wire.skip(tag)
      continue
    }

    if (columns.count === columns.states.length) columns = grow(columns)
    container(wire, wire.end(), columns, columns.count++)
  }

  return columns
}

/** The string of container i's span s ('' when absent): UTF-8, as every decoder reads it. */
export function text(columns: ContainerColumns, i: number, span: number): string {
  const start = columns.starts[i * SPANS + span]
  return start < 0 ? '' : (columns.bytes as SlicingBuffer).utf8Slice(start, columns.ends[i * SPANS + span])
}

/** Whether container i's message holds span s, even if empty. */
export function has(columns: ContainerColumns, i: number, span: number): boolean {
  return columns.starts[i * SPANS + span] >= 0
}

/** The offset of container i's span s in starts/ends. */
export function spanIndex(i: number, span: number): number {
  return i * SPANS + span
}

function container(wire: Wire, to: number, columns: ContainerColumns, i: number): void {
  const base = i * SPANS
  while (wire.pos < to) {
    const tag = wire.varint()
    switch (tag) {
      case 10: {
        span(wire, columns, base + Span.id)
        break
      }

      case 18: {
        span(wire, columns, base + Span.podSandboxId)
        break
      }

      case 26: {
        metadata(wire, wire.end(), columns, i)
        break
      }

      case 34: {
        imageSpec(wire, wire.end(), columns, base)
        break
      }

      case 42: {
        span(wire, columns, base + Span.imageRef)
        break
      }

      case 48: {
        // An Int32Array keeps the varint's low 32 bits as int32, as int32 fields are read.
        columns.states[i] = wire.varint()
        break
      }

      case 56: {
        columns.createdLow[i] = wire.varint()
        columns.createdHigh[i] = wire.high
        break
      }

      case 66: {
        label(wire, wire.end(), columns, base)
        break
      }

      case 82: {
        span(wire, columns, base + Span.imageId)
        break
      }

      default:
        wire.skip(tag)
    }
  }

  if (wire.pos !== to) throw new RangeError('premature EOF')
}

function metadata(wire: Wire, to: number, columns: ContainerColumns, i: number): void {
  while (wire.pos < to) {
    const tag = wire.varint()
    if (tag === 10) span(wire, columns, i * SPANS + Span.name)
    else if (tag === 16) columns.attempts[i] = wire.varint()
    else wire.skip(tag)
  }
}

function imageSpec(wire: Wire, to: number, columns: ContainerColumns, base: number): void {
  while (wire.pos < to) {
    const tag = wire.varint()
    if (tag === 10) span(wire, columns, base + Span.image)
    else if (tag === 146) span(wire, columns, base + Span.userSpecifiedImage)
    else wire.skip(tag)
  }
}

/** One labels entry (key 1, value 2): kept only for the kubelet's keys; a later entry for a key wins, as in a map. */
function label(wire: Wire, to: number, columns: ContainerColumns, base: number): void {
  let keyStart = -1
  let keyEnd = -1
  let valueStart = -1
  let valueEnd = -1
  while (wire.pos < to) {
    const tag = wire.varint()
    if (tag === 10) {
      keyEnd = wire.end()
      keyStart = wire.pos
      wire.pos = keyEnd
    } else if (tag === 18) {
      valueEnd = wire.end()
      valueStart = wire.pos
      wire.pos = valueEnd
    } else wire.skip(tag)
  }

  if (keyStart < 0) return
  const target = labelSpan(wire.bytes, keyStart, keyEnd, columns.labelKeys)
  if (target < 0) return
  // proto3 leaves an empty value out: the label is there, with "" as its value.
  columns.starts[base + target] = valueStart < 0 ? to : valueStart
  columns.ends[base + target] = valueStart < 0 ? to : valueEnd
}

/** The span of the label whose key is bytes [start, end), else -1. */
function labelSpan(bytes: Buffer, start: number, end: number, keys: readonly Buffer[]): number {
  const length = end - start
  // eslint-disable-next-line unicorn/no-for-loop -- the index is the span; entries() runs cold in a one-shot process
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]
    if (key.length !== length) continue
    let k = 0
    while (k < length && bytes[start + k] === key[k]) k++
    if (k === length) return Span.label0 + index
  }

  return -1
}

function span(wire: Wire, columns: ContainerColumns, at: number): void {
  const end = wire.end()
  columns.starts[at] = wire.pos
  columns.ends[at] = end
  wire.pos = end
}

/** Containers a message of this size holds at most, roughly: kubelet containers take 300–800 bytes each. */
function estimateCount(bytes: Buffer): number {
  return Math.max(16, Math.ceil(bytes.length / 256))
}

function allocate(bytes: Buffer, capacity: number, labelKeys: readonly Buffer[]): ContainerColumns {
  return {
    bytes,
    labelKeys,
    count: 0,
    starts: new Int32Array(capacity * SPANS).fill(-1),
    ends: new Int32Array(capacity * SPANS).fill(-1),
    states: new Int32Array(capacity),
    attempts: new Uint32Array(capacity),
    createdHigh: new Int32Array(capacity),
    createdLow: new Uint32Array(capacity),
  }
}

function grow(columns: ContainerColumns): ContainerColumns {
  const wider = allocate(columns.bytes, columns.states.length * 2, columns.labelKeys)
  wider.count = columns.count
  wider.starts.set(columns.starts)
  wider.ends.set(columns.ends)
  wider.states.set(columns.states)
  wider.attempts.set(columns.attempts)
  wider.createdHigh.set(columns.createdHigh)
  wider.createdLow.set(columns.createdLow)
  return wider
}
