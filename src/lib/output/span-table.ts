/**
 * table.ts's plain table for cells that are mostly spans of another buffer (a CRI message's bytes,
 * cri/container-columns.ts): each such cell is copied byte for byte into its column, so a listing of
 * thousands of rows makes no string for its IDs and names. The layout is renderTableBytes' exactly
 * (test/unit/output/span-table.test.ts draws the same tables both ways).
 */
import type {SpanCells} from '../util/span-cells.js'

/** Printable ASCII only: what the plain layout measures as one column a character. */
const PLAIN = /^[\u0020-\u007E]*$/
/** A byte of a drawn table that is neither printable ASCII nor a line's end. */
const NOT_PLAIN_LINES = /[^\u0020-\u007E\n]/

/** Buffer's own latin1 steps without their argument checks (as table.ts). */
interface LatinBuffer extends Buffer {
  latin1Write(text: string, offset: number): number
  latin1Slice(start: number, end: number): string
}

/**
 * The table as bytes with its final newline, as renderTableBytes(headers, rows) draws it when every cell
 * is printable ASCII; undefined when a cell is not (the caller then draws it from strings, as table.ts does).
 * Spans are measured by their byte counts and checked once drawn, the whole table in one regular
 * expression: a loop over each byte ran cold and took as long as the rest.
 */
export function renderSpanTable(headers: readonly string[], cells: SpanCells): Buffer | undefined {
  const {columns, rows, source} = cells
  if (headers.length !== columns || columns === 0 || !headers.every((header) => PLAIN.test(header))) return undefined
  const widths = headers.map((header) => Math.max(1, header.length))
  if (!measure(cells, widths)) return undefined
  const offsets: number[] = []
  let lineLength = 0
  for (const width of widths) {
    offsets.push(lineLength)
    lineLength += width + 3
  }

  // The source and the table in one buffer, so each span is one copyWithin: no view made per cell.
  const table = Buffer.allocUnsafe(source.length + (lineLength + 1) * (rows + 1)) as LatinBuffer
  table.set(source, 0)
  table.fill(0x20, source.length)
  let end = source.length
  for (let c = 0; c < columns; c++) {
    const at = source.length + offsets[c]
    if (headers[c].length > 0) end = at + table.latin1Write(headers[c], at)
  }

  const position = writeRows(cells, table, offsets, lineEnd(table, source.length, end))
  if (NOT_PLAIN_LINES.test(table.latin1Slice(source.length, position))) return undefined
  return table.subarray(source.length, position)
}

/**
 * Widens `widths` to every cell; false when a text cell is not printable ASCII (spans are checked
 * once drawn). Its own function, as is writeRows: one loop each to optimise, and neither
 * thrown back to the interpreter when the other starts.
 */
function measure(cells: SpanCells, widths: number[]): boolean {
  const {columns, rows, starts, ends, texts} = cells
  let checked = ''
  for (let cell = 0, row = 0; row < rows; row++) {
    for (let c = 0; c < columns; c++, cell++) {
      const start = starts[cell]
      let width: number
      if (start < 0) {
        const text = texts[cell] ?? ''
        // Texts repeat down a column (states, ages, images): each checked when it changes.
        if (text !== checked && !PLAIN.test(text)) return false
        checked = text
        width = text.length
      } else width = ends[cell] - start
      if (width > widths[c]) widths[c] = width
    }
  }

  return true
}

/** Writes each row at `position` (its cells at their column offsets); where the table ends. */
function writeRows(cells: SpanCells, table: LatinBuffer, offsets: readonly number[], position: number): number {
  const {columns, rows, starts, ends, texts} = cells
  for (let cell = 0, row = 0; row < rows; row++) {
    let end = position
    for (let c = 0; c < columns; c++, cell++) {
      const at = position + offsets[c]
      const start = starts[cell]
      if (start < 0) {
        const text = texts[cell]
        if (text !== undefined && text.length > 0) end = at + table.latin1Write(text, at)
      } else if (ends[cell] > start) {
        table.copyWithin(at, start, ends[cell])
        end = at + ends[cell] - start
      }
    }

    position = lineEnd(table, position, end)
  }

  return position
}

/** Ends the line that started at `start` and whose last cell ends at `end`; where the next line starts. */
function lineEnd(table: Buffer, start: number, end: number): number {
  // Trailing spaces trimmed, as the string table does: every byte past the last cell is a space.
  while (end > start && table[end - 1] === 0x20) end--
  table[end] = 0x0a
  return end + 1
}
