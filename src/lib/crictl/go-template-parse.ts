/**
 * Go's text/template/parse for the templates crictl runs (`-o go-template --template …`): the lexer's
 * `{{ }}` actions with `{{-`/`-}}` trimming and comments, and the parse tree of text, actions,
 * if/with/range (with else and else-if), break/continue, pipelines with variable declarations, field
 * chains, functions and constants, with Go's words for a template it cannot parse. Nodes keep their
 * byte offset for the "name:line:col" of execution errors (go-template.ts runs them).
 */

import {GoTemplateParseError, KEYWORDS, Lexer, type Token, unquote} from './go-template-lex.js'

export {GoTemplateParseError} from './go-template-lex.js'

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
    // Go places a chained field (`.a.b`, `$x.a`) at its second part (the chain's position).
    const chainPos = this.tokens[this.index].pos
    while (this.tokens[this.index].type === 'field') fields.push(this.tokens[this.index++].text.slice(1))
    if (fields.length === 0) return term
    if (term.kind === 'field' || term.kind === 'variable') return {...term, pos: chainPos, fields: [...term.fields, ...fields]}
    if (term.kind === 'bool' || term.kind === 'string' || term.kind === 'number' || term.kind === 'nil' || term.kind === 'dot')
      this.fail(`unexpected . after term ${JSON.stringify(termText(term))}`, term.pos)
    return {kind: 'chain', pos: chainPos, node: term, fields}
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
