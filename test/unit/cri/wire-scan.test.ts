/**
 * The wire scanning that `pods`' count and `ps`' columns share (src/lib/cri/wire-scan.ts), checked
 * against bytes written by the protobuf library's BinaryWriter: varints of every length, int64
 * values with their high word, each wire type stepped over, and malformed or cut-off input refused.
 */
import {BinaryWriter, WireType} from '@bufbuild/protobuf/wire'
import {describe, expect, it} from 'vitest'

import {after, high, skip, varint, varint64} from '../../../src/lib/cri/wire-scan.js'

/** Bytes the library writes, after a one-byte marker so that reading starts at an offset other than 0. */
function written(write: (writer: BinaryWriter) => void): Buffer {
  const writer = new BinaryWriter()
  writer.raw(new Uint8Array([0xaa]))
  write(writer)
  return Buffer.from(writer.finish())
}

const INT64 = [
  0n,
  1n,
  127n,
  128n,
  300n,
  16_383n,
  16_384n,
  (1n << 28n) - 1n,
  1n << 28n,
  (1n << 31n) + 5n,
  (1n << 32n) - 1n,
  1n << 32n,
  (1n << 35n) + 9n,
  1_700_000_000_000_000_000n,
  (1n << 63n) - 1n,
  -1n,
  -300n,
  -(1n << 63n),
]

describe('varint and varint64', () => {
  it('read every length of varint, from an offset, leaving `after` past it', () => {
    for (const value of INT64) {
      const bytes = written((writer) => writer.int64(value).raw(new Uint8Array([0x55])))
      const end = bytes.length - 1
      const low = Number(BigInt.asUintN(32, value))

      expect(varint(bytes, 1), `varint ${value}`).toBe(low)
      expect(after, `varint ${value}`).toBe(end)

      expect(varint64(bytes, 1), `varint64 ${value}`).toBe(low)
      expect(high, `varint64 ${value}`).toBe(Number(BigInt.asIntN(32, BigInt.asIntN(64, value) >> 32n)))
      expect(after, `varint64 ${value}`).toBe(end)
    }
  })

  it('read a uint64 above int64 and a uint32 as the same bits', () => {
    const max = written((writer) => writer.uint64(2n ** 64n - 1n))
    expect(varint64(max, 1)).toBe(0xff_ff_ff_ff)
    expect(high).toBe(-1)
    expect(after).toBe(11)
    expect(
      varint(
        written((writer) => writer.uint32(0xff_ff_ff_ff)),
        1,
      ),
    ).toBe(0xff_ff_ff_ff)
  })

  it('give varint64 a high word of 0 after a short varint, whatever the one before held', () => {
    varint64(
      written((writer) => writer.int64(-1n)),
      1,
    )
    expect(high).toBe(-1)
    varint64(
      written((writer) => writer.int64(5n)),
      1,
    )
    expect(high).toBe(0)
  })

  it('refuse a varint cut off by the end of the buffer', () => {
    const whole = written((writer) => writer.int64(1_700_000_000_000_000_000n))
    for (let end = 1; end < whole.length; end++) {
      const cut = whole.subarray(0, end)
      expect(() => varint(cut, 1), `cut at ${end}`).toThrow(new RangeError('invalid varint'))
      expect(() => varint64(cut, 1), `cut at ${end}`).toThrow(new RangeError('invalid varint'))
    }
  })

  it('refuse a varint longer than 10 bytes', () => {
    const eleven = Buffer.from([...Array.from({length: 10}, () => 0xff), 0x01])
    expect(() => varint(eleven, 0)).toThrow(new RangeError('invalid varint'))
    expect(() => varint64(eleven, 0)).toThrow(new RangeError('invalid varint'))
  })
})

describe('skip', () => {
  const fields: Array<[string, (writer: BinaryWriter) => void]> = [
    ['varint (one byte)', (writer) => writer.tag(1, WireType.Varint).int32(7)],
    ['varint (ten bytes)', (writer) => writer.tag(1, WireType.Varint).int64(-1n)],
    ['fixed64', (writer) => writer.tag(2, WireType.Bit64).fixed64(1n << 40n)],
    ['length-delimited (short)', (writer) => writer.tag(3, WireType.LengthDelimited).string('abc')],
    ['length-delimited (two-byte length)', (writer) => writer.tag(3, WireType.LengthDelimited).bytes(new Uint8Array(300))],
    ['fixed32', (writer) => writer.tag(4, WireType.Bit32).fixed32(0xde_ad_be_ef)],
  ]

  it('steps over a field of each wire type to the next field', () => {
    for (const [name, write] of fields) {
      const field = written(write)
      const bytes = written((writer) => {
        write(writer)
        writer.tag(9, WireType.Varint).int32(1)
      })
      const tag = varint(bytes, 1)
      // skip() moves `after` itself (it reads varints): the value's start is kept first.
      const start = after
      expect(skip(bytes, tag, start, bytes.length), name).toBe(field.length)
      // A field may end exactly where the message does.
      expect(skip(field, tag, start, field.length), name).toBe(field.length)
    }
  })

  it('refuses a field that runs past the end of its message', () => {
    for (const [name, write] of fields) {
      const bytes = written((writer) => {
        write(writer)
        writer.tag(9, WireType.Varint).int32(1)
      })
      const tag = varint(bytes, 1)
      const start = after
      const end = skip(bytes, tag, start, bytes.length)
      // The message ends one byte before the field does; the bytes after it are another message's.
      expect(() => skip(bytes, tag, start, end - 1), name).toThrow(new RangeError('premature EOF'))
    }
  })

  it('refuses a length-delimited field whose length is cut off', () => {
    const bytes = Buffer.from([(3 << 3) | WireType.LengthDelimited, 0x80])
    expect(() => skip(bytes, bytes[0], 1, bytes.length)).toThrow(new RangeError('invalid varint'))
  })

  it('refuses the wire types it cannot step over: groups and the unassigned 6 and 7', () => {
    for (const wire of [3, 4, 6, 7]) {
      const bytes = Buffer.from([(5 << 3) | wire, 0, 0, 0, 0, 0, 0, 0, 0])
      expect(() => skip(bytes, bytes[0], 1, bytes.length), `wire type ${wire}`).toThrow(new RangeError(`cannot skip wire type ${wire}`))
    }
  })
})
