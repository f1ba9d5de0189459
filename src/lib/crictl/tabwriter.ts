/**
 * Go's text/tabwriter, as crictl configures it for every table (minwidth 20, tabwidth 1, padding 3,
 * pad ' ', no flags) and as urfave/cli's help printer does (minwidth 1, padding 2): each
 * tab-terminated cell is padded to its column block's width (the widest cell plus the padding, at
 * least the minimum width); the last cell of a line is written as it is. Column blocks are runs of
 * consecutive lines that have a cell in that column, as in Go, so rows of different lengths lay
 * out the same way crictl's do. Widths count Unicode code points, as Go counts runes.
 */
export interface TabwriterOptions {
  minWidth: number
  padding: number
}

export const CRICTL_TABLE: TabwriterOptions = {minWidth: 20, padding: 3}
/** urfave/cli's help: its OPTIONS column and config's "CRICTL OPTIONS" table line up through this. */
export const URFAVE_HELP: TabwriterOptions = {minWidth: 1, padding: 2}

export function tabwrite(rows: ReadonlyArray<readonly string[]>, options: TabwriterOptions = CRICTL_TABLE): string {
  const lines = rows.map((row) => [...row])
  const out: string[] = []
  const widths: number[] = []
  const cellWidth = (text: string) => [...text].length

  const writeLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const cells = lines[i]
      out.push(
        cells
          .map((cell, j) =>
            j < cells.length - 1 && j < widths.length ? cell + ' '.repeat(Math.max(0, widths[j] - cellWidth(cell))) : cell,
          )
          .join(''),
      )
    }
  }

  const format = (start: number, end: number) => {
    const column = widths.length
    let line0 = start
    for (let current = start; current < end; current++) {
      if (column >= lines[current].length - 1) continue
      writeLines(line0, current)
      line0 = current
      let width = options.minWidth
      for (; current < end && column < lines[current].length - 1; current++) {
        width = Math.max(width, cellWidth(lines[current][column]) + options.padding)
      }

      widths.push(width)
      format(line0, current)
      widths.pop()
      line0 = current // the line that ended the block has no cell here: the loop may step past it
    }

    writeLines(line0, end)
  }

  format(0, lines.length)
  return out.map((line) => `${line}\n`).join('')
}

/** A whole text whose lines hold tab-separated cells (a help page), laid out as tabwrite lays out rows. */
export function tabwriteText(text: string, options: TabwriterOptions): string {
  return tabwrite(
    text.split('\n').map((line) => line.split('\t')),
    options,
  ).slice(0, -1)
}
