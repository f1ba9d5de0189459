import Table from 'cli-table3'

/** No borders, 3 spaces between columns: the layout crictl users read every day. */
const BORDERLESS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '   ',
}

/**
 * Buffer#write's own step for latin1, without its argument checks (a table of 10 000 containers
 * writes 90 000 cells): undocumented, but what Buffer#write(text, offset, 'latin1') calls
 * (test/unit/output/table.test.ts).
 */
interface WritingBuffer extends Buffer {
  latin1Write(text: string, offset: number): number
}

/** Printable ASCII only: no escape codes, no newlines, every character one column wide. */
const PLAIN = /^[\u0020-\u007E]*$/

/**
 * The table cli-table3 draws with BORDERLESS, padding 0 and compact style, for cells of plain
 * ASCII: each column as wide as its widest cell (at least 1), cells left-aligned and joined by three spaces,
 * trailing spaces trimmed. cli-table3 measures every cell with string-width, which builds its
 * regular expressions again on each call: 100 pods took tens of milliseconds, a third of a whole
 * start. Any other table (colour codes, wide or combining characters, line breaks, ragged rows) is
 * drawn by cli-table3 itself; test/unit/output/table.test.ts checks the two agree.
 */
function renderPlain(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string | undefined {
  const widths = headers.map(() => 1) // cli-table3 makes every column at least one wide
  if (!measure(headers, widths)) return undefined
  for (const row of rows) if (!measure(row, widths)) return undefined

  // Index loops and one string built as it goes: at 5000 rows, an array per row and an iterator
  // entry per cell were a tenth of a listing's own time.
  const last = headers.length - 1
  const line = (cells: readonly string[]) => {
    let text = ''
    for (let i = 0; i < last; i++) text += cells[i].padEnd(widths[i]) + '   '
    return (text + cells[last]).trimEnd()
  }

  let table = line(headers)
  for (const row of rows) table += '\n' + line(row)
  return table
}

/**
 * renderPlain's table as bytes, ending in a newline, for listings of thousands of rows: each cell's
 * characters go straight into one buffer at its column, so no padded copy of a cell, no string
 * of the whole table and no UTF-8 encoding of it on the way to stdout are made.
 */
function renderPlainBytes(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): Buffer | undefined {
  const widths = headers.map(() => 1)
  if (!measure(headers, widths)) return undefined
  for (const row of rows) if (!measure(row, widths)) return undefined

  const starts: number[] = []
  let lineLength = 0
  for (const width of widths) {
    starts.push(lineLength)
    lineLength += width + 3
  }

  // Native copies, a cell at a time: a loop over characters runs cold in a one-shot process.
  const bytes = Buffer.allocUnsafe((lineLength + 1) * (rows.length + 1)).fill(0x20) as WritingBuffer
  let position = 0
  const put = (cells: readonly string[]) => {
    let end = position
    // eslint-disable-next-line unicorn/no-for-loop -- entries() iterators run cold in a one-shot process: twice the time
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[i]
      if (cell.length === 0) continue
      const at = position + starts[i]
      bytes.latin1Write(cell, at)
      end = at + cell.length
    }

    // trimEnd: every byte past the last cell is a space, and so may the last cells' own ends be.
    while (end > position && bytes[end - 1] === 0x20) end--
    bytes[end] = 0x0a
    position = end + 1
  }

  put(headers)
  for (const row of rows) put(row)
  return bytes.subarray(0, position)
}

/** Widens `widths` to fit a row of plain ASCII cells; false for any other row. */
function measure(cells: readonly string[], widths: number[]): boolean {
  if (cells.length !== widths.length) return false
  // eslint-disable-next-line unicorn/no-for-loop -- an index loop: a callback per row ran cold and took a third of a big table's time
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i]
    if (typeof cell !== 'string' || !PLAIN.test(cell)) return false
    if (cell.length > widths[i]) widths[i] = cell.length
  }

  return true
}

export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const plain = headers.length > 0 ? renderPlain(headers, rows) : undefined
  if (plain !== undefined) return plain
  const table = new Table({
    head: [...headers],
    chars: BORDERLESS,
    style: {head: [], border: [], 'padding-left': 0, 'padding-right': 0, compact: true},
  })
  for (const row of rows) table.push([...row])
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
}

/** renderTable's table as bytes with its final newline: what a listing of thousands of rows writes to stdout. */
export function renderTableBytes(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): Buffer {
  return (headers.length > 0 ? renderPlainBytes(headers, rows) : undefined) ?? Buffer.from(`${renderTable(headers, rows)}\n`)
}

/** Two-column "Key:   value" block for detail views. */
export function renderFields(fields: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(0, ...fields.map(([key]) => key.length)) + 2
  return fields.map(([key, value]) => `${`${key}:`.padEnd(width)}${value}`.trimEnd()).join('\n')
}
