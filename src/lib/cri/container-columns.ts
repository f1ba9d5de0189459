/**
 * ListContainers' answer read into columns for `ps`'s table: where each printed string lies in the
 * message (a span of its bytes) and its numbers, in typed arrays, with no object or string made per
 * container. A table of 10 000 containers then copies its cells straight from the message; only
 * what a filter or the IMAGE column needs becomes a string (text()). Everything else a Container
 * holds (annotations, other labels) is stepped over, as in summaries.ts.
 */
import type {SlicingBuffer} from './buffer-reader.js'
import {after, high, skip, varint, varint64} from './wire-scan.js'

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

// The scan keeps its position in a local and reads one-byte varints (nearly every tag and length)
// inline: it runs once per listing, mostly in the interpreter, where a method call and a property
// write per varint cost more than the rest of the loop. Longer varints take wire-scan.ts's varint(),
// which leaves the position after them in `after`; created_at, an int64, takes varint64(), which
// also leaves its high 32 bits in `high`.

/**
 * Reads ListContainersResponse (repeated Container containers = 1) into columns, with the values of
 * up to three labels (e.g. the kubelet's pod name). Throws RangeError on a malformed message.
 * One function with the columns in locals, the nested messages and the common labels entry read
 * inline: calls and property loads per field were half of the scan's time before V8 optimised it.
 */
// One function on purpose (see above): its branches and depth are the fields of Container, inlined.
// eslint-disable-next-line complexity
export function readContainerColumns(bytes: Buffer, labelKeys: readonly string[] = []): ContainerColumns {
  /* eslint-disable max-depth -- the nested messages' loop, inlined for the same reason */
  if (labelKeys.length > LABELS) throw new RangeError(`at most ${LABELS} label keys`)
  const keys = labelKeys.map((key) => Buffer.from(key))
  const columns = allocate(bytes, countContainers(bytes), keys)
  const {starts, ends, states, attempts, createdHigh, createdLow} = columns
  const {length} = bytes
  let count = 0
  let pos = 0
  while (pos < length) {
    let tag = bytes[pos++]
    if (tag > 0x7f) {
      tag = varint(bytes, pos - 1)
      pos = after
    }

    if (tag !== 10) {
      pos = skip(bytes, tag, pos, length)
      continue
    }

    let size = bytes[pos++]
    if (size > 0x7f) {
      size = varint(bytes, pos - 1)
      pos = after
    }

    const to = pos + size
    if (!(to <= length)) throw new RangeError('premature EOF')
    const base = count * SPANS
    // Container's fields.
    while (pos < to) {
      tag = bytes[pos++]
      if (tag > 0x7f) {
        tag = varint(bytes, pos - 1)
        pos = after
      }

      if (tag === 48) {
        // An Int32Array keeps the varint's low 32 bits as int32, as int32 fields are read.
        states[count] = varint(bytes, pos)
        pos = after
        continue
      }

      if (tag === 56) {
        createdLow[count] = varint64(bytes, pos)
        createdHigh[count] = high
        pos = after
        continue
      }

      if ((tag & 7) !== 2) {
        pos = skip(bytes, tag, pos, to)
        continue
      }

      size = bytes[pos++]
      if (size > 0x7f) {
        size = varint(bytes, pos - 1)
        pos = after
      }

      const end = pos + size
      if (!(end <= to)) throw new RangeError('premature EOF')
      switch (tag) {
        case 10:
        case 18:
        case 42:
        case 82: {
          const at = base + (tag === 10 ? Span.id : tag === 18 ? Span.podSandboxId : tag === 42 ? Span.imageRef : Span.imageId)
          starts[at] = pos
          ends[at] = end
          break
        }

        case 66: {
          // A labels entry, most often key then value with one-byte lengths; anything else the long way.
          const keyEnd = pos + 2 + bytes[pos + 1]
          const value = keyEnd + 2 + bytes[keyEnd + 1]
          if (bytes[pos] === 10 && bytes[pos + 1] < 0x80 && bytes[keyEnd] === 18 && bytes[keyEnd + 1] < 0x80 && value === end) {
            const target = labelSpan(bytes, pos + 2, keyEnd, keys)
            if (target >= 0) {
              starts[base + target] = keyEnd + 2
              ends[base + target] = end
            }
          } else label(bytes, pos, end, columns, base)
          break
        }

        case 26:
        case 34: {
          // ContainerMetadata (name 1, attempt 2) or ImageSpec (image 1, user_specified_image 18).
          while (pos < end) {
            let field = bytes[pos++]
            if (field > 0x7f) {
              field = varint(bytes, pos - 1)
              pos = after
            }

            const named = field === 10 ? (tag === 26 ? Span.name : Span.image) : tag === 34 && field === 146 ? Span.userSpecifiedImage : -1
            if (named < 0 && !(tag === 26 && field === 16)) {
              pos = skip(bytes, field, pos, end)
              continue
            }

            let value = bytes[pos++]
            if (value > 0x7f) {
              value = varint(bytes, pos - 1)
              pos = after
            }

            if (named < 0) {
              attempts[count] = value
              continue
            }

            if (!(pos + value <= end)) throw new RangeError('premature EOF')
            starts[base + named] = pos
            pos += value
            ends[base + named] = pos
          }

          if (pos !== end) throw new RangeError('premature EOF')
          break
        }

        default:
        // Annotations and anything newer are stepped over.
      }

      pos = end
    }

    if (pos !== to) throw new RangeError('premature EOF')
    count++
  }

  /* eslint-enable max-depth */
  columns.count = count
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

/** One labels entry (key 1, value 2): kept only for the keys asked for; a later entry for a key wins, as in a map. */
function label(bytes: Buffer, pos: number, to: number, columns: ContainerColumns, base: number): void {
  let keyStart = -1
  let keyEnd = -1
  let valueStart = -1
  let valueEnd = -1
  // The uncommon entries only (the scan reads key-then-value itself): varint() for every number.
  while (pos < to) {
    const tag = varint(bytes, pos)
    pos = after
    if (tag !== 10 && tag !== 18) {
      pos = skip(bytes, tag, pos, to)
      continue
    }

    const end = varint(bytes, pos) + after
    pos = after
    if (!(end <= to)) throw new RangeError('premature EOF')
    if (tag === 10) {
      keyStart = pos
      keyEnd = end
    } else {
      valueStart = pos
      valueEnd = end
    }

    pos = end
  }

  if (pos !== to) throw new RangeError('premature EOF')
  if (keyStart < 0) return
  const target = labelSpan(bytes, keyStart, keyEnd, columns.labelKeys)
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

/**
 * How many containers the message holds, from its top-level fields alone: the columns are made to
 * size, so none is copied to grow and no page is touched for containers that are not there.
 */
function countContainers(bytes: Buffer): number {
  const {length} = bytes
  let count = 0
  let pos = 0
  while (pos < length) {
    const tag = varint(bytes, pos)
    pos = after
    if (tag === 10) count++
    pos = skip(bytes, tag, pos, length)
  }

  return count
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
