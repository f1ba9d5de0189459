/**
 * crictl's --name/--namespace filters: unanchored Go (RE2) regular expressions, where a pattern
 * Go cannot compile matches nothing (cmd/crictl util.go matchesRegex). JavaScript's RegExp differs,
 * so patterns are translated first:
 * - RE2-only syntax with a JS equivalent is rewritten: leading (?i)/(?s)/(?m) flags, (?P<name>…),
 *   \A and \z, \Q…\E, [[:alpha:]] classes, \pL, octal escapes, RE2's ASCII-only \s.
 * - JS-only syntax RE2 rejects (lookaround, backreferences, \k<…>, atomic groups) matches nothing,
 *   as in crictl.
 * - RE2 syntax JS cannot express ((?U), flags after the start, (?i:…) groups, [[:^alpha:]]) is
 *   refused with a usage error rather than guessed.
 */
import {UsageError} from '../errors.js'

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: String.raw`\x00-\x7F`,
  blank: String.raw`\t `,
  cntrl: String.raw`\x00-\x1F\x7F`,
  digit: '0-9',
  graph: String.raw`!-~`,
  lower: 'a-z',
  print: String.raw` -~`,
  punct: String.raw`!-\/:-@\[-\x60\{-~`,
  space: String.raw`\t\n\v\f\r `,
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
}

const RE2_SPACE = String.raw`\t\n\f\r `

/** A pattern RE2 itself rejects: crictl treats it as matching nothing. */
class NotRe2 extends Error {}

/**
 * The JS RegExp for a Go regular expression, or undefined when Go would not compile it (so it
 * matches nothing). Throws UsageError for RE2 syntax that has no JS form.
 */
export function re2ToRegExp(pattern: string, flag: string): RegExp | undefined {
  let source: string
  let flags: string
  try {
    ;({source, flags} = translate(pattern, flag))
  } catch (error) {
    if (error instanceof NotRe2) return undefined
    throw error
  }

  try {
    return new RegExp(source, `u${flags}`)
  } catch {
    return undefined
  }
}

/** crictl's matchesRegex: an empty pattern matches everything; an invalid one nothing. */
export function regexMatcher(pattern: string | undefined, flag: string): (value: string) => boolean {
  if (pattern === undefined || pattern === '') return () => true
  const regex = re2ToRegExp(pattern, flag)
  return regex ? (value) => regex.test(value) : () => false
}

function translate(pattern: string, flag: string): {source: string; flags: string} {
  const refuse = (what: string) => {
    throw new UsageError(`${flag} "${pattern}": ${what} is Go regexp syntax podctl cannot translate; rewrite the pattern without it`)
  }

  let flags = ''
  let rest = pattern
  const leading = /^\(\?([imsU]+)\)/.exec(rest)
  if (leading) {
    if (leading[1].includes('U')) refuse('(?U)')
    flags = [...new Set(leading[1])].join('')
    rest = rest.slice(leading[0].length)
  }

  let out = ''
  let inClass = false
  for (let i = 0; i < rest.length; i++) {
    const char = rest[i]
    if (char === '\\') {
      const next = rest[i + 1] ?? ''
      if (next === 'Q') {
        const end = rest.indexOf(String.raw`\E`, i + 2)
        const literal = end === -1 ? rest.slice(i + 2) : rest.slice(i + 2, end)
        out += literal.replaceAll(/[.*+?^${}()|[\]\\/-]/g, String.raw`\$&`)
        i = end === -1 ? rest.length : end + 1
        continue
      }

      if (next === 'A' && !inClass) out += String.raw`(?<![\s\S])`
      else if (next === 'z' && !inClass) out += String.raw`(?![\s\S])`
      else if (next === 's') out += inClass ? RE2_SPACE : `[${RE2_SPACE}]`
      else if (next === 'S') {
        if (inClass) refuse(String.raw`\S inside [...]`)
        out += `[^${RE2_SPACE}]`
      } else if ((next === 'p' || next === 'P') && /[A-Za-z]/.test(rest[i + 2] ?? '')) {
        out += `\\${next}{${rest[i + 2]}}`
        i += 1
      } else if (/[0-7]/.test(next)) {
        // Go: \0 and up to two more octal digits, or \[1-7] with one or two more; a lone \1 is a backreference.
        const octal = /^[0-7]{1,3}/.exec(rest.slice(i + 1))![0]
        if (next !== '0' && octal.length === 1) throw new NotRe2()
        out += `\\u{${Number.parseInt(octal, 8).toString(16)}}`
        i += octal.length - 1
      } else if (next === 'k' || /[89]/.test(next)) throw new NotRe2()
      else out += char + next

      i += 1
      continue
    }

    if (inClass) {
      if (char === '[' && rest[i + 1] === ':') {
        const end = rest.indexOf(':]', i + 2)
        const name = end === -1 ? '' : rest.slice(i + 2, end)
        if (name.startsWith('^')) refuse(`[[:${name}:]]`)
        const range = POSIX_CLASSES[name]
        if (range === undefined) throw new NotRe2()
        out += range
        i = end + 1
        continue
      }

      if (char === ']') inClass = false
      out += char === '/' || char === '[' ? `\\${char}` : char
      continue
    }

    if (char === '[') {
      inClass = true
      out += char
      if (rest[i + 1] === '^') out += rest[++i]
      if (rest[i + 1] === ']') {
        // A leading ] is a literal in RE2.
        out += String.raw`\]`
        i++
      }

      continue
    }

    if (char === '(' && rest[i + 1] === '?') {
      const group = rest.slice(i + 2)
      if (group.startsWith('P<')) {
        out += '(?<'
        i += 3
        continue
      }

      if (group.startsWith(':') || (group.startsWith('<') && !/^<[=!]/.test(group))) {
        out += '(?'
        i += 1
        continue
      }

      if (/^[=!]|^<[=!]|^>/.test(group)) throw new NotRe2()
      if (/^[imsU-]+[:)]/.test(group)) refuse(`(?${/^[imsU-]+[:)]/.exec(group)![0]}`)
      throw new NotRe2()
    }

    out += char
  }

  return {source: out, flags}
}
