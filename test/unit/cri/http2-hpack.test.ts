import {describe, expect, it} from 'vitest'

import {encodeHeaders, encodeInteger, type HeaderField, HpackDecoder, HpackError} from '../../../src/lib/cri/http2/hpack.js'
import {HUFFMAN_CODE_LENGTHS, HUFFMAN_CODES} from '../../../src/lib/cri/http2/hpack-tables.js'
import {huffmanDecode} from '../../../src/lib/cri/http2/huffman.js'

/**
 * HPACK against RFC 7541 Appendix C's examples (the byte strings as the RFC prints them; Go's
 * hpack_test.go carries the same ones): each step decodes one header block on one connection and
 * leaves the dynamic table as the RFC lists it, newest entry first, with its size.
 */
const hex = (text: string) => Buffer.from(text.replaceAll(/\s/g, ''), 'hex')

interface Step {
  block: string
  fields: HeaderField[]
  table: HeaderField[]
  size: number
}

function decodeSeries(tableBytes: number, steps: Step[]): void {
  const decoder = new HpackDecoder(tableBytes)
  for (const step of steps) {
    expect(decoder.decode(hex(step.block))).toEqual(step.fields)
    expect(decoder.tableSnapshot()).toEqual({fields: step.table, bytes: step.size})
  }
}

const authority: HeaderField = [':authority', 'www.example.com']
const noCache: HeaderField = ['cache-control', 'no-cache']
const custom: HeaderField = ['custom-key', 'custom-value']
const get = (scheme: string, path: string): HeaderField[] => [
  [':method', 'GET'],
  [':scheme', scheme],
  [':path', path],
]

/** C.3 and C.4 decode to the same lists and tables; only the strings' coding differs. */
const requests = (blocks: [string, string, string]): Step[] => [
  {block: blocks[0], fields: [...get('http', '/'), authority], table: [authority], size: 57},
  {block: blocks[1], fields: [...get('http', '/'), authority, noCache], table: [noCache, authority], size: 110},
  {block: blocks[2], fields: [...get('https', '/index.html'), authority, custom], table: [custom, noCache, authority], size: 164},
]

const status302: HeaderField = [':status', '302']
const status307: HeaderField = [':status', '307']
const privateCache: HeaderField = ['cache-control', 'private']
const date21: HeaderField = ['date', 'Mon, 21 Oct 2013 20:13:21 GMT']
const date22: HeaderField = ['date', 'Mon, 21 Oct 2013 20:13:22 GMT']
const location: HeaderField = ['location', 'https://www.example.com']
const gzip: HeaderField = ['content-encoding', 'gzip']
const cookie: HeaderField = ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1']

/** C.5 and C.6: a 256-byte table, so entries are evicted as the responses go. */
const responses = (blocks: [string, string, string]): Step[] => [
  {
    block: blocks[0],
    fields: [status302, privateCache, date21, location],
    table: [location, date21, privateCache, status302],
    size: 222,
  },
  {
    block: blocks[1],
    fields: [status307, privateCache, date21, location],
    table: [status307, location, date21, privateCache],
    size: 222,
  },
  {
    block: blocks[2],
    fields: [[':status', '200'], privateCache, date22, location, gzip, cookie],
    table: [cookie, gzip, date22],
    size: 215,
  },
]

describe('HPACK decoding (RFC 7541 Appendix C)', () => {
  it('C.3: requests without Huffman coding', () => {
    decodeSeries(
      4096,
      requests([
        '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
        '8286 84be 5808 6e6f 2d63 6163 6865',
        '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
      ]),
    )
  })

  it('C.4: requests with Huffman coding', () => {
    decodeSeries(
      4096,
      requests([
        '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
        '8286 84be 5886 a8eb 1064 9cbf',
        '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
      ]),
    )
  })

  it('C.5: responses without Huffman coding, evicting from a 256-byte table', () => {
    decodeSeries(
      256,
      responses([
        `4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
         2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
         6c65 2e63 6f6d`,
        '4803 3330 37c1 c0bf',
        `88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
         54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
         5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31`,
      ]),
    )
  })

  it('C.6: responses with Huffman coding, evicting from a 256-byte table', () => {
    decodeSeries(
      256,
      responses([
        `4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
         2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3`,
        '4883 640e ffc1 c0bf',
        `88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
         77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
         9587 3160 65c0 03ed 4ee5 b106 3d50 07`,
      ]),
    )
  })

  it('applies a table size update at the start of a block (evicting) and refuses one over the advertised size', () => {
    const decoder = new HpackDecoder(4096)
    decoder.decode(hex('8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d'))
    // 0x3f 0x1a: update to 57 (31 + 26); 0x20: update to 0, which empties the table.
    decoder.decode(hex('3f1a'))
    expect(decoder.tableSnapshot().bytes).toBe(57)
    expect(decoder.decode(hex('20 82'))).toEqual([[':method', 'GET']])
    expect(decoder.tableSnapshot()).toEqual({fields: [], bytes: 0})
    expect(() => decoder.decode(hex('3fe21f'))).toThrow(HpackError)
    // Not first in the block: section 4.2 forbids it.
    expect(() => new HpackDecoder().decode(hex('82 20'))).toThrow('dynamic table size update after a header field')
  })

  it('refuses index 0, an index past the tables, a string past the block and a truncated integer', () => {
    const decoder = new HpackDecoder()
    expect(() => decoder.decode(hex('80'))).toThrow(HpackError)
    expect(() => decoder.decode(hex('be'))).toThrow('index 62 is past the dynamic table')
    expect(() => decoder.decode(hex('0003 6162'))).toThrow('string runs past the header block')
    expect(() => decoder.decode(hex('ff'))).toThrow('header block ends inside an integer')
    expect(() => decoder.decode(hex('ffffffffff7f'))).toThrow('integer too large')
  })
})

describe('Huffman decoding (RFC 7541 section 5.2)', () => {
  it('decodes every byte value, and refuses EOS, long padding and padding that is not all ones', () => {
    expect(huffmanDecode(hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff')).toString('latin1')).toBe('www.example.com')
    // A whole byte of padding is too long.
    expect(() => huffmanDecode(hex('ff'))).toThrow('invalid padding')
    // EOS (30 ones) inside the string.
    expect(() => huffmanDecode(hex('ffff ffff'))).toThrow('Huffman string contains EOS')
    // 'a' is 00011 (5 bits); padding of 0s is not EOS's prefix.
    expect(() => huffmanDecode(hex('18'))).toThrow('invalid padding')
    // 'a' then 11 bits of ones: padding of 8 bits or more.
    expect(() => huffmanDecode(hex('1fff'))).toThrow('invalid padding')
    expect(huffmanDecode(hex('1f')).toString('latin1')).toBe('a')
  })
})

/** Packs each byte's code from the table, padded with ones: what a Huffman-coding peer sends. */
function huffmanEncode(bytes: Uint8Array): Buffer {
  let bits = ''
  for (const byte of bytes) bits += HUFFMAN_CODES[byte].toString(2).padStart(HUFFMAN_CODE_LENGTHS[byte], '0')
  bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '1')
  return Buffer.from(bits.match(/.{8}/g)!.map((byte) => Number.parseInt(byte, 2)))
}

describe('Huffman decoding of every byte value', () => {
  it('decodes all 256 codes, 5 to 30 bits long, in one string', () => {
    const all = Buffer.from(Array.from({length: 256}, (_, byte) => byte))
    expect(huffmanDecode(huffmanEncode(all))).toEqual(all)
  })
})

describe('HPACK encoding (literals without indexing, no Huffman)', () => {
  it('encodes what the decoder (and any peer) reads back, leaving its dynamic table empty', () => {
    const fields: HeaderField[] = [
      [':path', '/runtime.v1.RuntimeService/ListPodSandbox'],
      ['grpc-timeout', '2000m'],
      ['x-long', 'v'.repeat(300)],
    ]
    const decoder = new HpackDecoder()
    expect(decoder.decode(encodeHeaders(fields))).toEqual(fields)
    expect(decoder.tableSnapshot()).toEqual({fields: [], bytes: 0})
  })

  it('encodes integers as C.1 shows: 10 and 1337 with a 5-bit prefix, 42 with 8 bits', () => {
    expect(encodeInteger(10, 5, 0)).toEqual(hex('0a'))
    expect(encodeInteger(1337, 5, 0)).toEqual(hex('1f9a0a'))
    expect(encodeInteger(42, 8, 0)).toEqual(hex('2a'))
  })
})
