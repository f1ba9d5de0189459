/**
 * Go's text/tabwriter as urfave/cli's help printer sets it up (minwidth 1, tabwidth 8, padding 2,
 * padchar ' ', no flags): a tab ends a cell, and the cells of one column are padded to the widest
 * in their block of consecutive lines that have that column. crictl's help passes through it whole,
 * so the OPTIONS column and config's "CRICTL OPTIONS" table line up exactly as crictl's do.
 */
const MIN_WIDTH = 1
const PADDING = 2

type Line = string[]

export function tabwrite(text: string): string {
  const lines: Line[] = text.split('\n').map((line) => line.split('\t'))
  const widths: number[] = []
  const out: string[] = []

  const writeLines = (from: number, to: number): void => {
    for (let index = from; index < to; index++) {
      const cells = lines[index]
      let line = ''
      for (const [column, cell] of cells.entries()) {
        const last = column === cells.length - 1
        line += last || column >= widths.length ? cell : cell.padEnd(widths[column], ' ')
      }

      out.push(line)
    }
  }

  // Go's Writer.format: a column block is a run of lines with a cell in that column; recurse per block.
  const format = (line0: number, line1: number): void => {
    const column = widths.length
    let start = line0
    for (let index = line0; index < line1; index++) {
      if (column >= lines[index].length - 1) continue
      writeLines(start, index)
      start = index
      let width = MIN_WIDTH
      for (; index < line1 && column < lines[index].length - 1; index++) {
        width = Math.max(width, lines[index][column].length + PADDING)
      }

      widths.push(width)
      format(start, index)
      widths.pop()
      start = index
      index-- // the for loop's increment looks at the line that ended the block next
    }

    writeLines(start, line1)
  }

  format(0, lines.length)
  return out.join('\n')
}
