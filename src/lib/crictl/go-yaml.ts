/**
 * crictl's -o yaml: sigs.k8s.io/yaml's JSONToYAML of its JSON, i.e. the JSON read as YAML into
 * plain Go values and written by go-yaml v2: keys sorted in go-yaml's "natural" order (digit runs
 * compared as numbers, letters before other characters), block style with two-space indents and
 * sequences at their key's column, {} and [] for empty ones, strings plain unless they would read
 * back as another type (then double-quoted) or hold YAML indicators (then single-quoted), and plain
 * or single-quoted text folded at a space once a line passes 80 columns.
 */

const BEST_WIDTH = 80

/** JSON text → the YAML crictl prints (with its trailing newline). */
export function jsonToYaml(json: string): string {
  const value: unknown = JSON.parse(json)
  if (value === null || typeof value !== 'object') return `${scalar(value, 0, 0)}\n`
  if (isEmpty(value)) return Array.isArray(value) ? '[]\n' : '{}\n'
  return Array.isArray(value) ? sequence(value, 0) : mapping(value as Record<string, unknown>, 0)
}

function isEmpty(value: object): boolean {
  return Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0
}

function mapping(value: Record<string, unknown>, indent: number): string {
  const pad = ' '.repeat(indent)
  let out = ''
  for (const key of Object.keys(value).sort(naturalCompare)) {
    const item = value[key]
    const keyText = scalar(key, indent, indent)
    out += `${pad}${keyText}:`
    out += isBlock(item) ? `\n${block(item, indent, indent + 2)}` : ` ${node(item, indent + 2, indent + keyText.length + 2)}\n`
  }

  return out
}

function isBlock(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !isEmpty(value)
}

/** A non-empty list or map under a key or dash: go-yaml puts a list at the key's column, a map one step in. */
function block(value: object, listIndent: number, mapIndent: number): string {
  return Array.isArray(value) ? sequence(value, listIndent) : mapping(value as Record<string, unknown>, mapIndent)
}

function sequence(value: unknown[], indent: number): string {
  const pad = ' '.repeat(indent)
  let out = ''
  for (const item of value) {
    // The first entry of a nested block goes on the dash's line.
    out += `${pad}- ${isBlock(item) ? block(item, indent + 2, indent + 2).slice(indent + 2) : `${node(item, indent + 2, indent + 2)}\n`}`
  }

  return out
}

function node(value: unknown, indent: number, column: number): string {
  if (Array.isArray(value)) return '[]'
  if (value !== null && typeof value === 'object') return '{}'
  return scalar(value, indent, column)
}

function scalar(value: unknown, indent: number, column: number): string {
  if (value === null) return 'null'
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'number') return goFloatG(value)
  const text = String(value)
  if (text.includes('\n')) return doubleQuoted(text)
  if (resolvesToOtherType(text)) return doubleQuoted(text)
  if (plainAllowed(text)) return folded(text, indent, column)
  if (/^[\u0020-\u007E\u00A0-\uD7FF\uE000-\uFFFD]*$/u.test(text)) return folded(`'${text.replaceAll("'", "''")}'`, indent, column)
  return doubleQuoted(text)
}

/** go-yaml folds plain and single-quoted text at a single space once the line is past 80 columns. */
function folded(text: string, indent: number, column: number): string {
  let out = ''
  let col = column
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (char === ' ' && col > BEST_WIDTH && i > 0 && i < text.length - 1 && text[i - 1] !== ' ' && text[i + 1] !== ' ') {
      out += '\n' + ' '.repeat(indent)
      col = indent
      continue
    }

    out += char
    col++
  }

  return out
}

function doubleQuoted(text: string): string {
  let out = '"'
  for (const char of text) {
    const code = char.codePointAt(0)!
    switch (char) {
      case '"':
      case '\\': {
        out += `\\${char}`
        break
      }

      case '\n': {
        out += String.raw`\n`
        break
      }

      case '\t': {
        out += String.raw`\t`
        break
      }

      case '\r': {
        out += String.raw`\r`
        break
      }

      default:
        out += code < 0x20 || code === 0x7f ? `\\x${code.toString(16).toUpperCase().padStart(2, '0')}` : char
    }
  }

  return `${out}"`
}

const RESOLVED_WORDS = new Set(
  [
    'y Y yes Yes YES true True TRUE on On ON n N no No NO false False FALSE off Off OFF ~ null Null NULL',
    '.nan .NaN .NAN .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF <<',
  ]
    .join(' ')
    .split(' '),
)
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/
const YAML_INT = /^[-+]?(0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*)$/
const TIMESTAMP = /^\d{4}-\d{1,2}-\d{1,2}(?:(?:[Tt]|[ \t]+)\d{1,2}:\d{2}:\d{2}(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d{1,2}(?::\d{2})?))?)?$/
const BASE60 = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/

/** Whether go-yaml would read the text, unquoted, as something other than a string (then it quotes it). */
function resolvesToOtherType(text: string): boolean {
  if (text === '' || RESOLVED_WORDS.has(text)) return true
  const first = text[0]
  if (first === '.') return YAML_FLOAT.test(text)
  if (!/[-+0-9]/.test(first)) return false
  if (TIMESTAMP.test(text) || BASE60.test(text)) return true
  const plain = text.replaceAll('_', '')
  return YAML_INT.test(plain) || YAML_FLOAT.test(plain)
}

/** go-yaml's analysis of whether text may be written plain in block context. */
function plainAllowed(text: string): boolean {
  if (/^\s|\s$/.test(text)) return false
  if (/^(?:---|\.\.\.)/.test(text)) return false
  if (/^[#,[\]{}&*!|>'"%@`]/.test(text)) return false
  if (/^[-?:](?:\s|$)/.test(text)) return false
  if (/:(?:\s|$)/.test(text) || /\s#/.test(text)) return false
  return /^[\u0020-\u007E\u00A0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u.test(text)
}

/** strconv.FormatFloat(x, 'g', -1, 64), and integers as go-yaml writes ints. */
function goFloatG(value: number): string {
  if (Number.isNaN(value)) return '.nan'
  if (value === Infinity) return '.inf'
  if (value === -Infinity) return '-.inf'
  if (Number.isInteger(value) && Math.abs(value) < 2 ** 63) return BigInt(value).toString()
  const [digits, exponent] = value.toExponential().split('e')
  const exp = Number(exponent)
  if (exp < -4 || exp >= 21) return `${digits}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`
  return String(value)
}

/** go-yaml's key order (sorter.go keyList.Less) for string keys. */
function naturalCompare(a: string, b: string): number {
  if (a === b) return 0
  return naturalLess(a, b) ? -1 : 1
}

function naturalLess(a: string, b: string): boolean {
  const ar = [...a]
  const br = [...b]
  const isLetter = (c: string) => /\p{L}/u.test(c)
  const isDigit = (c: string | undefined) => c !== undefined && /\p{Nd}/u.test(c)
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue
    const al = isLetter(ar[i])
    const bl = isLetter(br[i])
    if (al && bl) return ar[i] < br[i]
    if (al || bl) return bl
    let an = 0n
    let bn = 0n
    if (ar[i] === '0' || br[i] === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== '0') {
          an = 1n
          bn = 1n
          break
        }
      }
    }

    let ai = i
    let bi = i
    for (; ai < ar.length && isDigit(ar[ai]); ai++) an = an * 10n + BigInt(ar[ai].codePointAt(0)! - 48)
    for (; bi < br.length && isDigit(br[bi]); bi++) bn = bn * 10n + BigInt(br[bi].codePointAt(0)! - 48)
    if (an !== bn) return an < bn
    if (ai !== bi) return ai < bi
    return ar[i] < br[i]
  }

  return ar.length < br.length
}
