/**
 * The protobuf wire format's two steps that the byte scans of ListContainers (container-columns.ts
 * for `ps`, current-containers.ts for `pods`) share: read a varint, step over a field.
 *
 * The scans keep their position in locals, not in a reader object: each runs once per listing over
 * megabytes, in a one-shot process, mostly in the interpreter, where a method call and a property
 * write per varint cost more than the rest of the loop. So varint() returns a value and leaves the
 * position after it in `after` (varint64() also the value's high 32 bits in `high`): module
 * variables that the importers read as live bindings; only this module writes them.
 */

/** The position just past the varint that varint() or varint64() read last. */
export let after = 0

/** The high (signed) 32 bits of the varint that varint64() read last. */
export let high = 0

/**
 * A varint's low 32 bits (unsigned), from `pos`: every tag, length and enum, and any number whose
 * high bits no scan needs. Up to 10 bytes, as an int64 or uint64 takes; throws RangeError('invalid
 * varint') for one that runs on past 10 bytes or past the buffer's end (there bytes[pos] is
 * undefined, which no comparison holds for, so the loop runs out).
 * One loop, the high bits dropped: with varint64()'s two loops for every varint, the `pods` count
 * took 1.2 and `ps`'s columns 1.3 times as long (one cold call each at 5000 fake pods, 2026-12-07).
 */
export function varint(bytes: Buffer, pos: number): number {
  let byte = bytes[pos++]
  if (byte < 0x80) {
    after = pos
    return byte
  }

  let value = byte & 0x7f
  for (let shift = 7; shift < 64; shift += 7) {
    byte = bytes[pos++]
    if (shift < 32) value |= (byte & 0x7f) << shift
    if (byte < 0x80) {
      after = pos
      return value >>> 0
    }
  }

  throw new RangeError('invalid varint')
}

/** A varint's low 32 bits (unsigned) as varint() reads them, and its high 32 bits (signed) in `high`: an int64. */
export function varint64(bytes: Buffer, pos: number): number {
  let low = 0
  let byte = 0
  for (let shift = 0; shift < 28; shift += 7) {
    byte = bytes[pos++]
    low |= (byte & 0x7f) << shift
    if (byte < 0x80) {
      high = 0
      after = pos
      return low >>> 0
    }
  }

  // The fifth byte holds bits 28..31 of the low word and the first 3 of the high one.
  byte = bytes[pos++]
  low |= (byte & 0x0f) << 28
  let word = (byte & 0x7f) >> 4
  for (let shift = 3; byte >= 0x80 && shift <= 31; shift += 7) {
    byte = bytes[pos++]
    word |= (byte & 0x7f) << shift
  }

  if (byte >= 0x80 || pos > bytes.length) throw new RangeError('invalid varint')
  high = word
  after = pos
  return low >>> 0
}

/**
 * Where a field of this tag, whose value starts at `pos`, ends; the message ends at `to`.
 * Throws RangeError for a wire type that cannot be stepped over (groups, 3 and 4, or 6 and 7) and
 * for a field that runs past `to`.
 */
export function skip(bytes: Buffer, tag: number, pos: number, to: number): number {
  let end: number
  switch (tag & 7) {
    case 0: {
      varint(bytes, pos)
      end = after
      break
    }

    case 1: {
      end = pos + 8
      break
    }

    case 2: {
      end = varint(bytes, pos) + after
      break
    }

    case 5: {
      end = pos + 4
      break
    }

    default:
      throw new RangeError(`cannot skip wire type ${tag & 7}`)
  }

  if (!(end <= to)) throw new RangeError('premature EOF')
  return end
}
