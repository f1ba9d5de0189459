import zlib from 'node:zlib'

import {describe, expect, it} from 'vitest'

import {
  controlStreamId,
  ControlType,
  decodeHeaderPairs,
  encodeDataFrame,
  encodeGoAway,
  encodeRstStream,
  encodeSynStream,
  FLAG_FIN,
  FrameReader,
  HeaderBlockWriter,
} from '../../../src/lib/streaming/spdy-frames.js'

describe('SPDY/3.1 frames', () => {
  it('encodes a data frame: stream id, FIN flag, 24-bit length, payload', () => {
    expect(encodeDataFrame(3, Buffer.from('hi')).toString('hex')).toBe('00000003000000026869')
    expect(encodeDataFrame(5, Buffer.alloc(0), true).toString('hex')).toBe('0000000501000000')
  })

  it('encodes control frames with version 3 and the type', () => {
    expect(encodeRstStream(7, 5).toString('hex')).toBe('80030003000000080000000700000005')
    expect(encodeGoAway(0).toString('hex')).toBe('80030007000000080000000000000000')
    const syn = encodeSynStream(1, Buffer.from('ab'))
    expect(syn.subarray(0, 8).toString('hex')).toBe('800300010000000c')
    expect(syn.readUInt32BE(8)).toBe(1)
  })

  it('reads frames split across chunks and several frames in one chunk', () => {
    const bytes = Buffer.concat([
      encodeDataFrame(1, Buffer.from('hello')),
      encodeRstStream(3, 5),
      encodeDataFrame(5, Buffer.alloc(0), true),
    ])
    const reader = new FrameReader()
    const frames = [...reader.push(bytes.subarray(0, 3)), ...reader.push(bytes.subarray(3, 20)), ...reader.push(bytes.subarray(20))]
    expect(frames).toEqual([
      {kind: 'data', streamId: 1, flags: 0, data: Buffer.from('hello')},
      {kind: 'control', type: ControlType.RST_STREAM, flags: 0, payload: Buffer.from('0000000300000005', 'hex')},
      {kind: 'data', streamId: 5, flags: FLAG_FIN, data: Buffer.alloc(0)},
    ])
    const [, reset] = frames
    expect(reset.kind === 'control' && controlStreamId(reset)).toBe(3)
  })

  it('refuses frames of another SPDY version', () => {
    const frame = encodeRstStream(1, 5)
    frame.writeUInt16BE(0x80_02, 0)
    expect(() => new FrameReader().push(frame)).toThrow('SPDY version 2 frame (expected 3)')
  })

  it('writes header blocks as one zlib stream any zlib reader inflates, lowercase names, each block ending in a sync flush', () => {
    const writer = new HeaderBlockWriter()
    const first = writer.encode({streamType: 'error'})
    const second = writer.encode({streamType: 'data', port: '8080', requestID: '0'})
    expect(first.subarray(0, 2).toString('hex')).toBe('7801')
    expect(first.subarray(-5).toString('hex')).toBe('000000ffff')
    expect(second.subarray(-5).toString('hex')).toBe('000000ffff')
    const inflated = zlib.inflateSync(Buffer.concat([first, second]), {finishFlush: zlib.constants.Z_SYNC_FLUSH})
    const firstLength = zlib.inflateSync(first, {finishFlush: zlib.constants.Z_SYNC_FLUSH}).length
    expect(decodeHeaderPairs(inflated.subarray(0, firstLength))).toEqual({streamtype: 'error'})
    expect(decodeHeaderPairs(inflated.subarray(firstLength))).toEqual({streamtype: 'data', port: '8080', requestid: '0'})
  })
})
