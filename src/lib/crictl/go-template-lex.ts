/**
 * Go's text/template lexer (text/template/parse/lex.go) for crictl's templates: text and `{{ }}`
 * actions with `{{-`/`-}}` trimming and comments, the tokens of each action, and Go's unquoting of
 * string and character constants.
 */

export class GoTemplateParseError extends Error {}

export type Token = {type: string; text: string; pos: number}

export const KEYWORDS = new Set(['block', 'break', 'continue', 'define', 'else', 'end', 'if', 'range', 'nil', 'template', 'with'])

/** The lexer: text and the tokens of each action. */
export class Lexer {
  readonly tokens: Token[] = []
  private pos = 0

  constructor(
    private readonly input: string,
    private readonly fail: (message: string, pos: number) => never,
  ) {}

  run(): Token[] {
    while (this.pos < this.input.length) {
      const start = this.input.indexOf('{{', this.pos)
      if (start === -1) {
        this.tokens.push({type: 'text', text: this.input.slice(this.pos), pos: this.pos})
        break
      }

      const trimLeft = /^\{\{-[ \t\r\n]/.test(this.input.slice(start, start + 4))
      let text = this.input.slice(this.pos, start)
      if (trimLeft) text = text.replace(/[ \t\r\n]+$/, '')
      if (text !== '') this.tokens.push({type: 'text', text, pos: this.pos})
      this.pos = start + (trimLeft ? 3 : 2)
      this.action()
    }

    this.tokens.push({type: 'eof', text: '', pos: this.input.length})
    return this.tokens
  }

  /** After `{{`: a comment, or the action's tokens up to `}}` (and the text trimmed after ` -}}`). */
  private action(): void {
    const rest = this.input.slice(this.pos)
    const comment = /^[ \t\r\n]*\/\*/.exec(rest)
    if (comment) {
      const end = this.input.indexOf('*/', this.pos + comment[0].length)
      if (end === -1) this.fail('unclosed comment', this.pos)
      this.pos = end + 2
      const close = /^([ \t\r\n]+-)?\}\}/.exec(this.input.slice(this.pos))
      if (!close) this.fail('comment ends before closing delimiter', this.pos)
      this.pos += close[0].length
      if (close[1]) this.skipSpaceAfterTrim()
      return
    }

    this.tokens.push({type: 'leftDelim', text: '{{', pos: this.pos})
    let parens = 0
    for (;;) {
      const right = /^([ \t\r\n]+-)?\}\}/.exec(this.input.slice(this.pos))
      if (right) {
        if (parens > 0) this.fail('unclosed left paren', this.pos)
        this.tokens.push({type: 'rightDelim', text: '}}', pos: this.pos})
        this.pos += right[0].length
        if (right[1]) this.skipSpaceAfterTrim()
        return
      }

      if (this.pos >= this.input.length) this.fail('unclosed action', this.pos)
      const char = this.input[this.pos]
      if (char === '\n' && parens === 0) this.fail('unclosed action', this.pos)
      if (char === '(') parens++
      if (char === ')') {
        parens--
        if (parens < 0) this.fail(`unexpected right paren`, this.pos)
      }

      this.token()
    }
  }

  private skipSpaceAfterTrim(): void {
    const spaces = /^[ \t\r\n]*/.exec(this.input.slice(this.pos))![0]
    this.pos += spaces.length
  }

  private token(): void {
    const rest = this.input.slice(this.pos)
    const pos = this.pos
    const patterns: Array<[string, RegExp]> = [
      ['space', /^[ \t\r\n]+/],
      ['declare', /^:=/],
      ['assign', /^=/],
      ['pipe', /^\|/],
      ['leftParen', /^\(/],
      ['rightParen', /^\)/],
      ['comma', /^,/],
      ['rawString', /^`[^`]*`/],
      ['string', /^"(?:[^"\\\n]|\\.)*"/],
      ['char', /^'(?:[^'\\\n]|\\.)+'/],
      ['number', /^[+-]?(?:0[xX][\da-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)i?/],
      ['variable', /^\$[\p{L}_\d]*/u],
      ['field', /^\.[\p{L}_][\p{L}_\d]*/u],
      ['dot', /^\./],
      ['identifier', /^[\p{L}_][\p{L}_\d]*/u],
    ]
    for (const [type, pattern] of patterns) {
      const match = pattern.exec(rest)
      if (!match) continue
      if (type === 'string' && rest[0] === '"' && !match) this.fail('unterminated quoted string', pos)
      this.pos += match[0].length
      if (type !== 'space' || this.tokens.at(-1)?.type !== 'space') this.tokens.push({type, text: match[0], pos})
      return
    }

    if (rest[0] === '"') this.fail('unterminated quoted string', pos)
    if (rest[0] === '`') this.fail('unterminated raw quoted string', pos)
    this.fail(`unexpected ${goQuoteRune(rest.codePointAt(0)!)} in command`, pos)
  }
}

function goQuoteRune(code: number): string {
  return code < 0x20 ? `'\\x${code.toString(16).padStart(2, '0')}'` : `'${String.fromCodePoint(code)}'`
}

/** Go's strconv.Unquote of a template string or char constant. */
export function unquote(text: string): string {
  if (text.startsWith('`')) return text.slice(1, -1)
  const body = text.slice(1, -1)
  return body.replaceAll(/\\(x[\da-fA-F]{2}|u[\da-fA-F]{4}|U[\da-fA-F]{8}|[0-7]{3}|.)/g, (_, escape: string) => {
    const simple: Record<string, string> = {
      a: '\u0007',
      b: '\b',
      f: '\f',
      n: '\n',
      r: '\r',
      t: '\t',
      v: '\v',
      '\\': '\\',
      "'": "'",
      '"': '"',
    }
    if (escape in simple) return simple[escape]
    if (/^[xuU]/.test(escape)) return String.fromCodePoint(Number.parseInt(escape.slice(1), 16))
    if (/^[0-7]{3}$/.test(escape)) return String.fromCodePoint(Number.parseInt(escape, 8))
    throw new GoTemplateParseError(`invalid syntax`)
  })
}
