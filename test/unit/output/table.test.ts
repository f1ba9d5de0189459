import Table from 'cli-table3'
import {describe, expect, it} from 'vitest'

import {renderTable, renderTableBytes} from '../../../src/lib/output/table.js'

/** The table exactly as cli-table3 draws it with podctl's options (the reference). */
function cliTable3(headers: string[], rows: string[][]): string {
  const none = {
    top: '',
    'top-mid': '',
    'top-left': '',
    'top-right': '',
    bottom: '',
    'bottom-mid': '',
    'bottom-left': '',
    'bottom-right': '',
  }
  const chars = {...none, left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '   '}
  const table = new Table({head: headers, chars, style: {head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true}})
  for (const row of rows) table.push(row)
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
}

let seed = 42
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]
const ascii = () => Array.from({length: Math.floor(random() * 14)}, () => String.fromCodePoint(0x20 + Math.floor(random() * 95))).join('')

describe('renderTable', () => {
  it("relies on Buffer's latin1Write, what Buffer#write(text, offset, 'latin1') calls", () => {
    const bytes = Buffer.alloc(4) as Buffer & {latin1Write?: (text: string, offset: number) => number}
    expect(typeof bytes.latin1Write).toBe('function')
    expect(bytes.latin1Write!('ab', 1)).toBe(2)
    expect([...bytes]).toEqual([0, 0x61, 0x62, 0])
  })

  it('draws plain ASCII tables exactly as cli-table3 does', () => {
    for (let i = 0; i < 400; i++) {
      const columns = 1 + Math.floor(random() * 8)
      const headers = Array.from({length: columns}, () => pick(['POD ID', 'NAME', 'STATE', '', 'A', 'CREATED', ' X ']))
      const rows = Array.from({length: Math.floor(random() * 12)}, () =>
        Array.from({length: columns}, () => pick(['', ' ', 'Ready', 'web-1  ', ascii(), ascii()])),
      )
      expect(renderTable(headers, rows), JSON.stringify({headers, rows})).toBe(cliTable3(headers, rows))
      expect(renderTableBytes(headers, rows).toString('latin1'), JSON.stringify({headers, rows})).toBe(`${cliTable3(headers, rows)}\n`)
    }
  })

  it('draws 100 rows in well under a millisecond per row', () => {
    const headers = ['POD ID', 'NAME', 'NAMESPACE', 'STATE', 'CONTAINERS', 'ATTEMPT', 'CREATED']
    const rows = Array.from({length: 100}, (_, i) => ['0123456789abc', `bench-${i}`, 'bench-list', 'Ready', '1/1', '0', '2 minutes ago'])
    const started = performance.now()
    const text = renderTable(headers, rows)
    expect(performance.now() - started).toBeLessThan(50)
    expect(text).toBe(cliTable3(headers, rows))
  })

  it('leaves colour, wide characters, line breaks and ragged rows to cli-table3', () => {
    const cases: Array<[string[], string[][]]> = [
      [
        ['NAME', 'STATE'],
        [
          ['web', '\u001B[32mRunning\u001B[39m'],
          ['db', '\u001B[31mExited\u001B[39m'],
        ],
      ],
      [
        ['NAME', 'IMAGE'],
        [
          ['café', 'busybox'],
          ['日本', 'pause'],
          ['😀', 'x'],
        ],
      ],
      [
        ['NAME', 'NOTE'],
        [
          ['web', 'two\nlines'],
          ['db', 'one'],
        ],
      ],
      [
        ['NAME', 'STATE', 'EXTRA'],
        [
          ['web', 'Ready'],
          ['db', 'Ready', 'x', 'y'],
        ],
      ],
    ]
    for (const [headers, rows] of cases) {
      expect(renderTable(headers, rows)).toBe(cliTable3(headers, rows))
      expect(renderTableBytes(headers, rows).toString('utf8')).toBe(`${cliTable3(headers, rows)}\n`)
    }
  })
})
