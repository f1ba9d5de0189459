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

export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
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

/** Two-column "Key:   value" block for detail views. */
export function renderFields(fields: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(0, ...fields.map(([key]) => key.length)) + 2
  return fields.map(([key, value]) => `${`${key}:`.padEnd(width)}${value}`.trimEnd()).join('\n')
}
