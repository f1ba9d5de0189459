const CLEAR_SCREEN = '\u001B[2J\u001B[H'

/**
 * What goes before one --watch refresh: a table on a terminal is redrawn in place; a pipe gets one
 * table (or document) after another, separated from the one before.
 */
export function refreshPrefix(kind: string, options: {tty: boolean; first: boolean}): string {
  if (options.tty && kind === 'table') return CLEAR_SCREEN
  if (options.first) return ''
  return kind === 'yaml' ? '---\n' : '\n'
}
