/**
 * A YAML syntax error in podctl's words, for a file that may be no manifest at all (an .env, a key):
 * where it is (line and column), and what is wrong without quoting the input.
 */
import type {YAMLError} from 'yaml'

export function wherePos(error: YAMLError): string {
  return error.linePos ? `line ${error.linePos[0].line}, column ${error.linePos[0].col}: ` : ''
}

/**
 * The library's own words where they are fixed text; where they quote the input (a token, a tag, a
 * directive, an escape sequence), a description instead: a file that is no manifest (an .env, a
 * key) is never echoed. The line and column say where.
 */
const FIXED_TEXT_CODES = new Set([
  'ALIAS_PROPS',
  'BAD_ALIAS',
  'BAD_INDENT',
  'BAD_SCALAR_START',
  'BLOCK_AS_IMPLICIT_KEY',
  'BLOCK_IN_FLOW',
  'DUPLICATE_KEY',
  'KEY_OVER_1024_CHARS',
  'MISSING_CHAR',
  'MULTILINE_IMPLICIT_KEY',
  'MULTIPLE_ANCHORS',
  'MULTIPLE_DOCS',
  'MULTIPLE_TAGS',
  'NON_STRING_KEY',
  'TAB_AS_INDENT',
])
const DESCRIBED: Record<string, string> = {
  BAD_DIRECTIVE: 'a YAML directive (a line starting with %) that is not %YAML or %TAG',
  BAD_DQ_ESCAPE: String.raw`an invalid escape sequence (\) in a double-quoted string`,
  BAD_PROP_ORDER: 'an anchor or tag before the ? or : indicator instead of after it',
  TAG_RESOLVE_FAILED: 'a YAML tag podctl does not read',
  UNEXPECTED_TOKEN: 'unexpected text here',
}

export function syntaxProblem(error: YAMLError): string {
  if (!FIXED_TEXT_CODES.has(error.code)) return DESCRIBED[error.code] ?? 'cannot be read here'
  return error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')
}
