/**
 * A table's cells as spans of another buffer (a CRI message's bytes) or as texts: what a listing of
 * thousands of rows fills without making a string per ID or name, and output/span-table.ts draws.
 */

/** A table's cells: cell (row r, column c) is at r * columns + c. */
export interface SpanCells {
  /** What spans point into. */
  source: Uint8Array
  columns: number
  rows: number
  /** A span's first byte and the byte after it; start -1 for a text cell (texts[cell], '' when unset). */
  starts: Int32Array
  ends: Int32Array
  texts: string[]
}

export function spanCells(source: Uint8Array, rows: number, columns: number): SpanCells {
  return {
    source,
    columns,
    rows,
    starts: new Int32Array(rows * columns).fill(-1),
    ends: new Int32Array(rows * columns),
    // Filled as cells are set: one array of rows × columns made up front took longer than the table.
    texts: [],
  }
}
