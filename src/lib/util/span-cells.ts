/**
 * A table's cells as spans of another buffer (a CRI message's bytes) or of a pool of texts: what a
 * listing of thousands of rows fills without making a string per cell, and output/span-table.ts
 * draws. Texts repeat down a column (images, ages, states), so each distinct one is pooled once.
 */

/** Printable ASCII only: what the plain layout measures as one column a character. */
export const PLAIN = /^[\u0020-\u007E]*$/

/** A table's cells: cell (row r, column c) is at r * columns + c. */
export interface SpanCells {
  /** What spans point into. */
  source: Uint8Array
  columns: number
  rows: number
  /**
   * A cell's bytes: source [starts, ends); a start of -1 is an empty cell, and a start below -1 a
   * pooled text, pool [-2 - start, ends).
   */
  starts: Int32Array
  ends: Int32Array
  /** The pooled texts' bytes, poolLength of them used. */
  pool: Buffer
  poolLength: number
  /** False once a text that is not printable ASCII was pooled: the table cannot be drawn from bytes. */
  plain: boolean
}

/** A pooled text, as a cell's start and end. */
export interface PooledText {
  start: number
  end: number
}

export function spanCells(source: Uint8Array, rows: number, columns: number): SpanCells {
  return {
    source,
    columns,
    rows,
    starts: new Int32Array(rows * columns).fill(-1),
    ends: new Int32Array(rows * columns),
    pool: Buffer.allocUnsafe(1024),
    poolLength: 0,
    plain: true,
  }
}

/** Adds `text` to the pool (once per distinct text: the caller keeps what this returns). */
export function poolText(cells: SpanCells, text: string): PooledText {
  if (!PLAIN.test(text)) cells.plain = false
  const offset = cells.poolLength
  if (offset + text.length > cells.pool.length) {
    const wider = Buffer.allocUnsafe(Math.max(cells.pool.length * 2, offset + text.length))
    cells.pool.copy(wider, 0, 0, offset)
    cells.pool = wider
  }

  cells.poolLength += cells.pool.write(text, offset, 'latin1')
  return {start: -2 - offset, end: cells.poolLength}
}

export function setText(cells: SpanCells, cell: number, text: PooledText): void {
  cells.starts[cell] = text.start
  cells.ends[cell] = text.end
}
