/**
 * table.ts's plain table for cells that are spans of another buffer (a CRI message's bytes,
 * cri/container-columns.ts) or of a pool of texts (util/span-cells.ts): each cell is copied byte for
 * byte into its column, so a listing of thousands of rows makes no string per cell. The layout is
 * renderTableBytes' exactly (test/unit/output/span-table.test.ts draws the same tables both ways).
 */
import {PLAIN, type SpanCells} from '../util/span-cells.js'

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
  const {columns, rows} = cells
  if (!cells.plain || headers.length !== columns || columns === 0 || !headers.every((header) => PLAIN.test(header))) return undefined
  const widths = headers.map((header) => Math.max(1, header.length))
  measure(cells, widths)
  const offsets: number[] = []
  let lineLength = 0
  for (const width of widths) {
    offsets.push(lineLength)
    lineLength += width + 3
  }

  const table = Buffer.allocUnsafe((lineLength + 1) * (rows + 1)) as LatinBuffer
  table.fill(0x20)
  let end = 0
  for (let c = 0; c < columns; c++) {
    if (headers[c].length > 0) end = offsets[c] + table.latin1Write(headers[c], offsets[c])
  }

  const position = writeRows(cells, table, offsets, lineEnd(table, 0, end))
  if (NOT_PLAIN_LINES.test(table.latin1Slice(0, position))) return undefined
  return table.subarray(0, position)
}

/**
 * Widens `widths` to every cell. Its own function, as is writeRows: one loop each to optimise, and
 * neither thrown back to the interpreter when the other starts.
 */
function measure(cells: SpanCells, widths: number[]): void {
  const {columns, rows, starts, ends} = cells
  for (let cell = 0, row = 0; row < rows; row++) {
    for (let c = 0; c < columns; c++, cell++) {
      const start = starts[cell]
      if (start === -1) continue
      const width = ends[cell] - (start < 0 ? -2 - start : start)
      if (width > widths[c]) widths[c] = width
    }
  }
}

/**
 * Writes each row at `position` (its cells at their column offsets); where the table ends. Cells are
 * copied a byte at a time: they are a dozen bytes or so, and a loop soon optimised beat a call per cell.
 */
function writeRows(cells: SpanCells, table: Buffer, offsets: readonly number[], position: number): number {
  const {columns, rows, starts, ends, source, pool} = cells
  for (let cell = 0, row = 0; row < rows; row++) {
    let end = position
    for (let c = 0; c < columns; c++, cell++) {
      const start = starts[cell]
      const stop = ends[cell]
      if (start === -1) continue
      let at = position + offsets[c]
      if (start >= 0) for (let j = start; j < stop; j++) table[at++] = source[j]
      else for (let j = -2 - start; j < stop; j++) table[at++] = pool[j]
      if (at > position + offsets[c]) end = at
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
