/**
 * A systemd unit file as text (systemd.syntax(7), systemd.service(5)): sections of `Key=value` lines
 * under `#` comments, and ExecStart's command line quoted the way systemd splits it back into argv.
 * Pure: no file is read or written.
 */

export interface UnitSection {
  name: string
  /** In order; a key may repeat (After=, Wants=). Comments go above the line they explain. */
  entries: ReadonlyArray<{key: string; value: string; comment?: string}>
}

export interface UnitFile {
  /** Lines of the header comment, above the first section. */
  header: readonly string[]
  sections: readonly UnitSection[]
}

/**
 * One ExecStart argument as systemd reads it back: `$` is doubled (else `$NAME` is an environment
 * variable), and an argument with a space, quote, backslash or `;`, or an empty one, goes inside
 * double quotes with C escapes (systemd unquotes ExecStart with C-style escapes). `%` is left to
 * renderUnit, which doubles it in every value (specifiers).
 */
export function quoteExecArg(argument: string): string {
  const dollars = argument.replaceAll('$', '$$$$')
  if (dollars !== '' && !/[\s"'\\;]/.test(dollars)) return dollars
  const escaped = dollars.replaceAll(/[\\"\n\t\r]/g, (char) => ESCAPES[char])
  return `"${escaped}"`
}

/** ExecStart's value: the program (an absolute path) and its arguments, each quoted as needed. */
export function execLine(argv: readonly string[]): string {
  if (argv.length === 0 || !argv[0].startsWith('/')) throw new Error(`ExecStart needs an absolute program path, got "${argv[0] ?? ''}"`)
  return argv.map((argument) => quoteExecArg(argument)).join(' ')
}

/**
 * The unit file: header comment, then each section. Every value has `%` doubled (systemd expands
 * `%n`, `%h`, ... in Description=, ExecStart= and most other settings) and line breaks folded
 * into spaces (a value is one line).
 */
export function renderUnit(unit: UnitFile): string {
  const lines = unit.header.map((line) => `# ${oneLine(line)}`.trimEnd())
  for (const section of unit.sections) {
    if (lines.length > 0) lines.push('')
    lines.push(`[${section.name}]`)
    for (const {key, value, comment} of section.entries) {
      if (comment) lines.push(`# ${oneLine(comment)}`)
      lines.push(`${key}=${oneLine(value).replaceAll('%', '%%')}`)
    }
  }

  return `${lines.join('\n')}\n`
}

/** Whether a name is a valid unit name with one of the given suffixes (systemd.unit(5): letters, digits, ":-_.\\@"). */
export function isUnitName(name: string, suffixes: readonly string[]): boolean {
  const dot = name.lastIndexOf('.')
  if (dot <= 0 || !suffixes.includes(name.slice(dot + 1))) return false
  return name.length <= 255 && /^[\w:.\\@-]+$/.test(name)
}

/** Unit types a service may order itself after and want. */
export const DEPENDENCY_SUFFIXES = ['service', 'socket', 'target', 'mount', 'path', 'device', 'swap', 'timer', 'slice', 'scope'] as const

/** The C escapes of the characters an ExecStart argument cannot hold as they are inside double quotes. */
const ESCAPES: Record<string, string> = {
  '\\': String.raw`\\`,
  '"': String.raw`\"`,
  '\n': String.raw`\n`,
  '\t': String.raw`\t`,
  '\r': String.raw`\r`,
}

function oneLine(text: string): string {
  return text.replaceAll(/\s*[\r\n]+\s*/g, ' ')
}
