/**
 * ExecStart= read back the way systemd splits it (systemd.service(5), "Command lines"), written apart
 * from src/lib/util/systemd-unit.ts so a test can check a round trip: `%%` is `%`, `$$` is `$`, words
 * split on whitespace, double or single quotes group a word, and inside double quotes the C escapes
 * \\ \" \n \t \r are undone. Specifiers other than %% and $VARIABLES are refused (the unit has none).
 */
export function splitExecStart(value: string): string[] {
  const words: string[] = []
  let word: string | undefined
  const token = /(\s+)|"((?:[^"\\]|\\.)*)"|'([^']*)'|(%%|\$\$)|([%$"'\\])|([^\s"'%$\\]+)/gy
  for (let match = token.exec(value); match; match = token.exec(value)) {
    const [, space, doubleQuoted, singleQuoted, doubled, stray, plain] = match
    if (stray !== undefined) throw new Error(`unexpected ${stray} at ${match.index} of ${value}`)
    if (space === undefined) {
      const text = doubleQuoted === undefined ? (singleQuoted ?? doubled?.[0] ?? plain) : unquote(doubleQuoted, value)
      word = (word ?? '') + text
    } else if (word !== undefined) {
      words.push(word)
      word = undefined
    }
  }

  if (word !== undefined) words.push(word)
  return words
}

/** Inside double quotes: the C escapes undone; `%%` and `$$` as outside. */
function unquote(text: string, value: string): string {
  return text.replaceAll(/\\(.)|%%|\$\$/g, (whole, escaped: string | undefined) =>
    escaped === undefined ? whole[0] : unescape(escaped, value),
  )
}

const ESCAPES: Record<string, string> = {'\\': '\\', '"': '"', n: '\n', t: '\t', r: '\r'}

function unescape(char: string, value: string): string {
  if (!(char in ESCAPES)) throw new Error(`unknown escape \\${char} in ${value}`)
  return ESCAPES[char]
}

/** The value of the first `KEY=` line of a unit file. */
export function unitValue(unit: string, key: string): string | undefined {
  return new RegExp(`^${key}=(.*)$`, 'm').exec(unit)?.[1]
}
