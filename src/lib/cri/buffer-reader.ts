import {BinaryReader, WireType} from '@bufbuild/protobuf/wire'

/**
 * Buffer#toString's own step, without its argument checks (a listing of 5000 pods reads 150 000
 * strings): undocumented, but it is what Buffer#toString('utf8') calls (test/unit/cri/buffer-reader.test.ts).
 */
export interface SlicingBuffer extends Buffer {
  utf8Slice(start: number, end: number): string
}

/**
 * The generated code's BinaryReader, reading strings straight out of the gRPC message's Buffer.
 * BinaryReader#string makes a Uint8Array view for each string and passes it to TextDecoder: in a
 * listing (a ListContainers answer for 100 containers holds thousands of label strings) that is
 * most of the decoding. Buffer#toString decodes UTF-8 the same way (an invalid sequence becomes
 * U+FFFD in both) without either step.
 */
export class BufferReader extends BinaryReader {
  private readonly buffer: SlicingBuffer

  constructor(buffer: Buffer) {
    super(buffer)
    this.buffer = buffer as SlicingBuffer
  }

  override string(): string {
    const length = this.uint32()
    const start = this.pos
    this.pos += length
    if (this.pos > this.len) throw new RangeError('premature EOF')
    return this.buffer.utf8Slice(start, this.pos)
  }

  /** Reads a length-delimited field's length; where the field ends. */
  fieldEnd(): number {
    const end = this.uint32() + this.pos
    if (end > this.len) throw new RangeError('premature EOF')
    return end
  }

  /** Steps over the field whose tag was just read; BinaryReader#skip makes a view of a length-delimited one first. */
  skipField(tag: number): void {
    if ((tag & 7) === WireType.LengthDelimited) this.pos = this.fieldEnd()
    else this.skip(tag & 7, tag >>> 3)
  }
}
