/**
 * HPACK's Huffman decoding (RFC 7541 section 5.2 and Appendix B). Go's HTTP/2 servers (containerd,
 * CRI-O) Huffman-encode the header strings they send; podctl never encodes with it (literal strings
 * are simpler and always allowed).
 */
import {HUFFMAN_CODE_LENGTHS, HUFFMAN_CODES} from './hpack-tables.js'

export class HpackError extends Error {}

/** EOS: the 257th symbol, thirty 1 bits; it must never appear inside a string. */
const EOS = 256
const EOS_CODE = 0x3f_ff_ff_ff
const EOS_LENGTH = 30

/**
 * The code as a binary tree in two flat arrays: children[2n] / children[2n+1] are node n's 0 / 1
 * branches (0 when absent), and symbols[n] is the byte a leaf decodes to (-1 for inner nodes).
 * Built on the first Huffman string: a command whose runtime sends none never pays for it.
 */
interface HuffmanTree {
  children: Int32Array
  symbols: Int16Array
}

let tree: HuffmanTree | undefined

function buildTree(): HuffmanTree {
  // 257 leaves make 256 inner nodes: 513 nodes in all.
  const children = new Int32Array(2 * 513)
  const symbols = new Int16Array(513).fill(-1)
  let nodes = 1
  for (let symbol = 0; symbol <= EOS; symbol++) {
    const code = symbol === EOS ? EOS_CODE : HUFFMAN_CODES[symbol]
    const length = symbol === EOS ? EOS_LENGTH : HUFFMAN_CODE_LENGTHS[symbol]
    let node = 0
    for (let bit = length - 1; bit >= 0; bit--) {
      const branch = 2 * node + ((code >>> bit) & 1)
      if (children[branch] === 0) children[branch] = nodes++
      node = children[branch]
    }

    symbols[node] = symbol
  }

  return {children, symbols}
}

/**
 * The bytes a Huffman string stands for. Padding must be the most significant bits of EOS (all
 * ones) and shorter than 8 bits; EOS itself is an error (section 5.2).
 */
export function huffmanDecode(encoded: Uint8Array): Buffer {
  tree ??= buildTree()
  const {children, symbols} = tree
  // Every code is at least 5 bits long: 8 bits in give at most 8/5 bytes out.
  const out = Buffer.allocUnsafe(Math.ceil((encoded.length * 8) / 5))
  let written = 0
  let node = 0
  let bitsSinceSymbol = 0
  let allOnes = true
  for (const byte of encoded) {
    for (let bit = 7; bit >= 0; bit--) {
      const one = (byte >>> bit) & 1
      node = children[2 * node + one]
      bitsSinceSymbol++
      allOnes &&= one === 1
      const symbol = symbols[node]
      if (symbol === -1) continue
      if (symbol === EOS) throw new HpackError('Huffman string contains EOS')
      out[written++] = symbol
      node = 0
      bitsSinceSymbol = 0
      allOnes = true
    }
  }

  if (bitsSinceSymbol > 7 || !allOnes) throw new HpackError('Huffman string has invalid padding')
  return out.subarray(0, written)
}
