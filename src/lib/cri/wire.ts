/**
 * The protobuf wire format read for columns (container-columns.ts, sandbox-columns.ts): varints as
 * two 32-bit words, lengths and skips, with no object made per field.
 */
/** A cursor over protobuf varints, kept monomorphic so the scan's loop optimises early. */
export class Wire {
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
