import {describe, expect, it} from 'vitest'

import {renderSpanTable} from '../../../src/lib/output/span-table.js'
import {poolText, setText, spanCells} from '../../../src/lib/util/span-cells.js'
import {renderTableBytes} from '../../../src/lib/output/table.js'

let seed = 11
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]
const WORDS = ['', ' ', 'a', 'web-7f9c', '  lead', 'trail  ', 'Running', '3 minutes ago', 'x'.repeat(40), 'é', 'Łódź', 'tab\there', 'ok']

describe('span table: cells copied from a buffer', () => {
  it('draws what renderTableBytes draws from the same strings, or nothing when a cell is not printable ASCII', () => {
    let drawn = 0
    for (let round = 0; round < 400; round++) {
      const columns = 1 + Math.floor(random() * 6)
      const rows = Math.floor(random() * 8)
      const headers = Array.from({length: columns}, () => pick(['ID', 'NAME', '', 'POD ID', 'A LONG HEADER']))
      const strings = Array.from({length: rows}, () => Array.from({length: columns}, () => pick(WORDS)))
      // The spans' source: every string a span of, in random order, with bytes between them.
      const parts: Buffer[] = [Buffer.from('\u0000junk')]
      const cells = spanCells(Buffer.alloc(0), rows, columns)
      let offset = parts[0].length
      for (let row = 0; row < rows; row++) {
        for (let c = 0; c < columns; c++) {
          const value = strings[row][c]
          const cell = row * columns + c
          // A text cell, now and then an empty one left unset.
          const asText = random() < 0.5
          if (asText && (value !== '' || random() < 0.5)) setText(cells, cell, poolText(cells, value))
          if (asText) continue

          const bytes = Buffer.from(value)
          cells.starts[cell] = offset
          cells.ends[cell] = offset + bytes.length
          parts.push(bytes, Buffer.from('\n\u001B'))
          offset += bytes.length + 2
        }
      }

      cells.source = Buffer.concat(parts)
      const plain = [...headers, ...strings.flat()].every((value) => /^[\u0020-\u007E]*$/.test(value))
      const table = renderSpanTable(headers, cells)
      if (!plain) {
        expect(table).toBeUndefined()
        continue
      }

      drawn++
      expect(table?.toString()).toBe(renderTableBytes(headers, strings).toString())
    }

    expect(drawn).toBeGreaterThan(100)
  })
})
