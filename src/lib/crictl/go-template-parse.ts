/**
 * Go's text/template/parse for the templates crictl runs (`-o go-template --template …`): the lexer's
 * `{{ }}` actions with `{{-`/`-}}` trimming and comments, and the parse tree of text, actions,
 * if/with/range (with else and else-if), break/continue, pipelines with variable declarations, field
 * chains, functions and constants, with Go's words for a template it cannot parse. Nodes keep their
 * byte offset for the "name:line:col" of execution errors (go-template.ts runs them).
 */

export class GoTemplateParseError extends Error {}

export type ArgNode =
  | {kind: 'field'; pos: number; fields: string[]}
  | {kind: 'variable'; pos: number; name: string; fields: string[]}
  | {kind: 'dot'; pos: number}
  | {kind: 'nil'; pos: number}
  | {kind: 'bool'; pos: number; value: boolean}
  | {kind: 'number'; pos: number; text: string; value: number}
  | {kind: 'string'; pos: number; text: string; value: string}
  | {kind: 'identifier'; pos: number; name: string}
  | {kind: 'pipe'; pos: number; pipe: PipeNode}
  | {kind: 'chain'; pos: number; node: ArgNode; fields: string[]}

export interface CommandNode {
  pos: number
  args: ArgNode[]
}

export interface PipeNode {
  pos: number
  decl: string[]
  assign: boolean
  cmds: CommandNode[]
}

export type Node =
  {kind: 'text'; text: string} | {kind: 'action'; pos: number; pipe: PipeNode} | ControlNode | {kind: 'break' | 'continue'; pos: number}

export interface ControlNode {
  kind: 'if' | 'with' | 'range'
  pos: number
  pipe: PipeNode
  list: Node[]
  elseList?: Node[]
}

type Token = {type: string; text: string; pos: number}

const KEYWORDS = new Set(['block', 'break', 'continue', 'define', 'else', 'end', 'if', 'range', 'nil', 'template', 'with'])

/** The lexer: text and the tokens of each action. */
class Lexer {
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
function unquote(text: string): string {
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

/** Parses a template; errors read as Go's: `template: NAME:LINE: message`. */
export function parseGoTemplate(input: string, name: string): Node[] {
  const fail = (message: string, pos: number): never => {
    const line = 1 + (input.slice(0, pos).match(/\n/g)?.length ?? 0)
    throw new GoTemplateParseError(`template: ${name}:${line}: ${message}`)
  }

  return new Parser(new Lexer(input, fail).run(), fail).template()
}

class Parser {
  private index = 0
  private readonly vars: string[][] = [['$']]

  constructor(
    private readonly tokens: Token[],
    private readonly fail: (message: string, pos: number) => never,
  ) {}

  template(): Node[] {
    const {list, end} = this.list()
    if (end) this.fail(`unexpected ${end.text}`, end.pos)
    return list
  }

  private peek(): Token {
    let at = this.index
    while (this.tokens[at].type === 'space') at++
    return this.tokens[at]
  }

  private next(skipSpace = true): Token {
    if (skipSpace) while (this.tokens[this.index].type === 'space') this.index++
    return this.tokens[this.index++]
  }

  /** Nodes up to EOF, or up to an {{end}} / {{else}} (returned). */
  private list(): {list: Node[]; end?: Token; elseToken?: boolean} {
    const list: Node[] = []
    for (;;) {
      const token = this.next(false)
      if (token.type === 'eof') return {list}
      if (token.type === 'text') {
        list.push({kind: 'text', text: token.text})
        continue
      }

      const word = this.peek()
      if (word.type === 'identifier' && (word.text === 'end' || word.text === 'else')) {
        this.next()
        if (word.text === 'end') this.expect('rightDelim', 'end')
        return {list, end: word, elseToken: word.text === 'else'}
      }

      list.push(this.action())
    }
  }

  private expect(type: string, context: string): Token {
    const token = this.next()
    if (token.type !== type) this.fail(`unexpected ${describe(token)} in ${context}`, token.pos)
    return token
  }

  private action(): Node {
    const token = this.peek()
    if (token.type === 'identifier' && KEYWORDS.has(token.text) && token.text !== 'nil') {
      this.next()
      switch (token.text) {
        case 'if':
        case 'with':
        case 'range':
          return this.control(token.text, token.pos)
        case 'break':
        case 'continue':
          this.expect('rightDelim', token.text)
          return {kind: token.text, pos: token.pos}
        default:
          this.fail(`${token.text} is not supported by crictl's templates in podctl`, token.pos)
      }
    }

    return {kind: 'action', pos: token.pos, pipe: this.pipeline('command')}
  }

  private control(kind: 'if' | 'with' | 'range', pos: number): Node {
    this.vars.push([])
    const pipe = this.pipeline(kind)
    const {list, end, elseToken} = this.list()
    if (!end) this.fail(`unexpected EOF`, pos)
    let elseList: Node[] | undefined
    if (elseToken) {
      const chained = this.peek()
      if ((kind === 'if' || kind === 'with') && chained.type === 'identifier' && chained.text === kind) {
        // {{else if …}} / {{else with …}}: a nested control that consumes the single {{end}}.
        this.next()
        elseList = [this.control(kind, chained.pos)]
      } else {
        this.expect('rightDelim', 'else')
        const rest = this.list()
        if (!rest.end || rest.elseToken) this.fail(`expected end; found ${rest.end ? 'else' : 'EOF'}`, pos)
        elseList = rest.list
      }
    }

    this.vars.pop()
    return {kind, pos, pipe, list, elseList}
  }

  private pipeline(context: string): PipeNode {
    const start = this.peek()
    const pipe: PipeNode = {pos: start.pos, decl: [], assign: false, cmds: []}
    this.declarations(pipe, context)
    for (;;) {
      const token = this.peek()
      if (token.type === 'rightDelim' || token.type === 'rightParen') {
        if (token.type === 'rightDelim') this.next()
        if (pipe.cmds.length === 0) this.fail(`missing value for ${context}`, token.pos)
        return pipe
      }

      pipe.cmds.push(this.command())
      const after = this.peek()
      if (after.type === 'pipe') this.next()
      else if (after.type !== 'rightDelim' && after.type !== 'rightParen') this.fail(`unexpected ${describe(after)} in operand`, after.pos)
    }
  }

  private declarations(pipe: PipeNode, context: string): void {
    const save = this.index
    const first = this.peek()
    if (first.type !== 'variable') return
    this.next()
    const op = this.peek()
    if (op.type === 'declare' || op.type === 'assign') {
      this.next()
      pipe.decl.push(first.text)
      pipe.assign = op.type === 'assign'
      if (pipe.assign) {
        this.checkVariable(first)
      } else {
        this.vars.at(-1)!.push(first.text)
      }

      return
    }

    if (op.type === 'comma' && context === 'range') {
      this.next()
      const second = this.expect('variable', 'range')
      const declare = this.next()
      if (declare.type !== 'declare' && declare.type !== 'assign') this.fail('range can only initialize variables', declare.pos)
      pipe.decl.push(first.text, second.text)
      if (declare.type === 'declare') this.vars.at(-1)!.push(first.text, second.text)
      return
    }

    this.index = save
  }

  private checkVariable(token: Token): void {
    const name = token.text.split('.')[0]
    if (!this.vars.some((scope) => scope.includes(name))) this.fail(`undefined variable "${name}"`, token.pos)
  }

  private command(): CommandNode {
    const pos = this.peek().pos
    const args: ArgNode[] = []
    for (;;) {
      const token = this.peek()
      if (['pipe', 'rightDelim', 'rightParen'].includes(token.type)) break
      if (args.length > 0 && this.tokens[this.index].type !== 'space') this.fail(`unexpected ${describe(token)} in operand`, token.pos)
      args.push(this.operand())
    }

    if (args.length === 0) this.fail('missing value for command', pos)
    return {pos, args}
  }

  private operand(): ArgNode {
    const term = this.term()
    const fields: string[] = []
    while (this.tokens[this.index].type === 'field') fields.push(this.tokens[this.index++].text.slice(1))
    if (fields.length === 0) return term
    if (term.kind === 'field' || term.kind === 'variable') return {...term, fields: [...term.fields, ...fields]}
    if (term.kind === 'bool' || term.kind === 'string' || term.kind === 'number' || term.kind === 'nil' || term.kind === 'dot')
      this.fail(`unexpected . after term ${JSON.stringify(termText(term))}`, term.pos)
    return {kind: 'chain', pos: term.pos, node: term, fields}
  }

  private term(): ArgNode {
    const token = this.next()
    switch (token.type) {
      case 'field':
        return {kind: 'field', pos: token.pos, fields: [token.text.slice(1)]}
      case 'variable':
        this.checkVariable(token)
        return {kind: 'variable', pos: token.pos, name: token.text, fields: []}
      case 'dot':
        return {kind: 'dot', pos: token.pos}
      case 'string':
      case 'rawString':
        return {kind: 'string', pos: token.pos, text: token.text, value: unquote(token.text)}
      case 'char':
        return {kind: 'number', pos: token.pos, text: token.text, value: unquote(token.text.replaceAll("'", '"')).codePointAt(0)!}
      case 'number':
        return {
          kind: 'number',
          pos: token.pos,
          text: token.text,
          value: goNumber(token.text, () => this.fail(`illegal number syntax: ${JSON.stringify(token.text)}`, token.pos)),
        }
      case 'leftParen': {
        const pipe = this.pipeline('parenthesized pipeline')
        this.expect('rightParen', 'operand')
        return {kind: 'pipe', pos: token.pos, pipe}
      }

      case 'identifier':
        if (token.text === 'true' || token.text === 'false') return {kind: 'bool', pos: token.pos, value: token.text === 'true'}
        if (token.text === 'nil') return {kind: 'nil', pos: token.pos}
        if (KEYWORDS.has(token.text)) this.fail(`unexpected <${token.text}> in operand`, token.pos)
        return {kind: 'identifier', pos: token.pos, name: token.text}
      default:
        return this.fail(`unexpected ${describe(token)} in operand`, token.pos)
    }
  }
}

function goNumber(text: string, fail: () => never): number {
  const clean = text.replaceAll('_', '')
  if (clean.endsWith('i')) fail()
  const sign = clean.startsWith('-') ? -1 : 1
  const digits = clean.replace(/^[+-]/, '')
  let value: number
  if (/^0[xX]/.test(digits)) value = Number.parseInt(digits.slice(2), 16)
  else if (/^0[bB]/.test(digits)) value = Number.parseInt(digits.slice(2), 2)
  else if (/^0[oO]/.test(digits)) value = Number.parseInt(digits.slice(2), 8)
  else if (/^0\d+$/.test(digits)) value = Number.parseInt(digits, 8)
  else value = Number(digits)
  if (Number.isNaN(value)) fail()
  return sign * value
}

function termText(node: ArgNode): string {
  switch (node.kind) {
    case 'string':
    case 'number':
      return node.text
    case 'bool':
      return String(node.value)
    case 'nil':
      return 'nil'
    default:
      return '.'
  }
}

function describe(token: Token): string {
  if (token.type === 'eof') return 'EOF'
  if (token.type === 'rightDelim') return '"}}"'
  if (token.type === 'identifier' || token.type === 'field' || token.type === 'variable') return `<${token.text}>`
  return JSON.stringify(token.text)
}

/** A node as Go's Node.String() writes it, for the "at <…>" of execution errors. */
export function nodeText(node: ArgNode | CommandNode | PipeNode): string {
  if ('cmds' in node) return node.cmds.map((cmd) => nodeText(cmd)).join(' | ')
  if ('args' in node) return node.args.map((arg) => (arg.kind === 'pipe' ? `(${nodeText(arg.pipe)})` : nodeText(arg))).join(' ')
  switch (node.kind) {
    case 'field':
      return `.${node.fields.join('.')}`
    case 'variable':
      return [node.name, ...node.fields].join('.')
    case 'dot':
      return '.'
    case 'nil':
      return 'nil'
    case 'bool':
      return String(node.value)
    case 'number':
    case 'string':
      return node.text
    case 'identifier':
      return node.name
    case 'pipe':
      return `(${nodeText(node.pipe)})`
    case 'chain':
      return `${nodeText(node.node)}.${node.fields.join('.')}`
  }
}
