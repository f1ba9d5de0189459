/**
 * crictl's `-o go-template`: Go's text/template run over the JSON document (decoded with UseNumber,
 * so numbers stay json.Number), with Option("missingkey=error") and crictl's functions json, title,
 * lower and upper beside the builtins. What Go does is what scripts see: a field that is not in a map
 * is an error, `index` of a missing key is the zero value and prints `<no value>`, a map prints as
 * fmt's `map[k:v …]` (sorted keys) and a list as `[a b]`, null inside them as `<nil>`. Errors read as
 * Go's, `template: NAME:LINE:COL: executing "NAME" at <.status.x>: map has no entry for key "x"`.
 */
import {
  type ArgNode,
  type CommandNode,
  type ControlNode,
  GoTemplateParseError,
  type Node,
  nodeText,
  parseGoTemplate,
  type PipeNode,
} from './go-template-parse.js'
import {GoFloat, GoNumber, goTypeName, type GoValue, goValueText, parseGoJson, truthOf} from './go-values.js'
import {BUILTINS, FUNCTION_NAMES} from './go-template-funcs.js'

/** crictl's name for its template (tmplExecuteRawJSON). */
export const CRICTL_TEMPLATE_NAME = 'tmplExecuteRawJSON'

export class GoTemplateError extends Error {}

class ExecError extends Error {}
class LoopControl {
  constructor(readonly kind: 'break' | 'continue') {}
}

/** crictl's validateTemplate: the template parses (events checks it before connecting). Throws Go's parse error. */
export function validateGoTemplate(template: string, name = ''): void {
  checkFunctions(parseGoTemplate(template, name), template, name)
}

/**
 * crictl's tmplExecuteRawJSON: the document decoded with UseNumber, then the template. Throws
 * GoTemplateError with crictl's words (`failed to generate go-template: …`, `failed to template data: …`).
 */
export function renderGoTemplate(template: string, json: string): string {
  let nodes: Node[]
  try {
    nodes = parseGoTemplate(template, CRICTL_TEMPLATE_NAME)
    checkFunctions(nodes, template, CRICTL_TEMPLATE_NAME)
  } catch (error) {
    if (error instanceof GoTemplateParseError) throw new GoTemplateError(`failed to generate go-template: ${error.message}`)
    throw error
  }

  const state = new State(template, parseGoJson(json))
  try {
    state.walkList(state.root, nodes)
  } catch (error) {
    if (error instanceof ExecError) throw new GoTemplateError(`failed to template data: ${error.message}`)
    throw error
  }

  return state.out
}

/** Go checks every function a template names when it parses it. */
function checkFunctions(nodes: readonly Node[], template: string, name: string): void {
  const visitArg = (arg: ArgNode): void => {
    if (arg.kind === 'identifier' && !FUNCTION_NAMES.has(arg.name)) {
      const line = 1 + (template.slice(0, arg.pos).match(/\n/g)?.length ?? 0)
      throw new GoTemplateParseError(`template: ${name}:${line}: function "${arg.name}" not defined`)
    }

    if (arg.kind === 'pipe') visitPipe(arg.pipe)
    if (arg.kind === 'chain') visitArg(arg.node)
  }

  const visitPipe = (pipe: PipeNode) => {
    for (const cmd of pipe.cmds) for (const arg of cmd.args) visitArg(arg)
  }

  for (const node of nodes) {
    if (node.kind === 'action' || node.kind === 'if' || node.kind === 'with' || node.kind === 'range') visitPipe(node.pipe)
    if ('list' in node) checkFunctions(node.list, template, name)
    if ('elseList' in node && node.elseList) checkFunctions(node.elseList, template, name)
  }
}

const MISSING = undefined

class State {
  out = ''
  private readonly vars: Array<[string, GoValue]> = []
  /** Whether dot is a range element: reflect holds it as interface {}, which names its type in errors. */
  private boxedDot = false

  constructor(
    private readonly template: string,
    readonly root: GoValue,
  ) {
    this.vars.push(['$', root])
  }

  /** Go's errorf: the failure with the node's place and text. */
  fail(pos: number, context: string, message: string): never {
    const before = this.template.slice(0, pos)
    const newline = before.lastIndexOf('\n')
    const line = 1 + (before.match(/\n/g)?.length ?? 0)
    const column = newline === -1 ? pos : pos - newline - 1
    throw new ExecError(
      `template: ${CRICTL_TEMPLATE_NAME}:${line}:${column}: executing "${CRICTL_TEMPLATE_NAME}" at <${context}>: ${message}`,
    )
  }

  walkList(dot: GoValue, nodes: readonly Node[]): void {
    for (const node of nodes) this.walk(dot, node)
  }

  private walk(dot: GoValue, node: Node): void {
    switch (node.kind) {
      case 'text':
        this.out += node.text
        return
      case 'action': {
        const value = this.pipeline(dot, node.pipe)
        if (node.pipe.decl.length === 0) this.out += printable(value)
        return
      }

      case 'if':
      case 'with': {
        const mark = this.vars.length
        const value = this.pipeline(dot, node.pipe)
        if (truthOf(value)) this.walkList(node.kind === 'with' ? value : dot, node.list)
        else if (node.elseList) this.walkList(dot, node.elseList)
        this.vars.length = mark
        return
      }

      case 'range':
        this.range(dot, node)
        return
      case 'break':
      case 'continue':
        throw new LoopControl(node.kind)
    }
  }

  private range(dot: GoValue, node: ControlNode): void {
    const mark = this.vars.length
    const value = this.pipeline(dot, {...node.pipe, decl: []})
    let entries: Array<[GoValue, GoValue]>
    if (Array.isArray(value)) entries = value.map((item, index) => [index, item])
    else if (value !== null && typeof value === 'object' && !(value instanceof GoNumber))
      entries = Object.keys(value)
        .sort()
        .map((key) => [key, (value as Record<string, GoValue>)[key]])
    else if (value === MISSING || value === null) entries = []
    else this.fail(node.pipe.pos, nodeText(node.pipe), `range can't iterate over ${goValueText(value)}`)

    if (entries.length === 0) {
      if (node.elseList) this.walkList(dot, node.elseList)
      this.vars.length = mark
      return
    }

    for (const [key, item] of entries) {
      const inner = this.vars.length
      if (node.pipe.decl.length === 1) this.vars.push([node.pipe.decl[0], item])
      if (node.pipe.decl.length === 2) this.vars.push([node.pipe.decl[0], key], [node.pipe.decl[1], item])
      const boxed = this.boxedDot
      this.boxedDot = true
      try {
        this.walkList(item, node.list)
      } catch (error) {
        if (!(error instanceof LoopControl)) throw error
        if (error.kind === 'break') break
      } finally {
        this.vars.length = inner
        this.boxedDot = boxed
      }
    }

    this.vars.length = mark
  }

  pipeline(dot: GoValue, pipe: PipeNode): GoValue {
    let value: GoValue = MISSING
    let first = true
    for (const cmd of pipe.cmds) {
      value = this.command(dot, cmd, first ? MISSING : value, !first)
      first = false
      // An interface{} holding nil is dug down to nothing: it prints <no value>.
      if (value === null) value = MISSING
    }

    for (const name of pipe.decl) {
      if (pipe.assign) {
        const entry = this.vars.findLast(([varName]) => varName === name)
        if (entry) entry[1] = value
      } else {
        this.vars.push([name, value])
      }
    }

    return value
  }

  private command(dot: GoValue, cmd: CommandNode, final: GoValue, hasFinal: boolean): GoValue {
    const [first, ...rest] = cmd.args
    const args = hasFinal ? [...rest, {kind: 'final' as const}] : rest
    switch (first.kind) {
      case 'identifier':
        return this.call(dot, cmd, first.name, args, final)
      case 'field':
        return this.fieldChain(dot, first, dot, first.fields, args.length > 0, cmd)
      case 'variable':
        return this.fieldChain(dot, first, this.variable(first), first.fields, args.length > 0, cmd)
      case 'chain': {
        const base = this.arg(dot, first.node)
        return this.fieldChain(dot, first, base, first.fields, args.length > 0, cmd)
      }

      default:
        if (args.length > 0) this.fail(cmd.pos, nodeText(cmd), `can't give argument to non-function ${nodeText(first)}`)
        return this.arg(dot, first)
    }
  }

  private variable(node: Extract<ArgNode, {kind: 'variable'}>): GoValue {
    const entry = this.vars.findLast(([name]) => name === node.name)
    if (!entry) this.fail(node.pos, nodeText(node), `undefined variable: ${node.name}`)
    return entry[1]
  }

  arg(dot: GoValue, node: ArgNode): GoValue {
    switch (node.kind) {
      case 'dot':
        return dot
      case 'nil':
        return null
      case 'bool':
      case 'number':
      case 'string':
        return node.value
      case 'field':
        return this.fieldChain(dot, node, dot, node.fields, false)
      case 'variable':
        return this.fieldChain(dot, node, this.variable(node), node.fields, false)
      case 'pipe': {
        const mark = this.vars.length
        const value = this.pipeline(dot, node.pipe)
        this.vars.length = mark
        return value
      }

      case 'chain':
        return this.fieldChain(dot, node, this.arg(dot, node.node), node.fields, false)
      case 'identifier':
        return this.call(dot, {pos: node.pos, args: [node]}, node.name, [], MISSING)
    }
  }

  private fieldChain(
    dot: GoValue,
    node: ArgNode,
    receiver: GoValue,
    fields: readonly string[],
    hasArgs: boolean,
    cmd?: CommandNode,
  ): GoValue {
    let value = receiver
    for (const [index, name] of fields.entries()) {
      const last = index === fields.length - 1
      // A value taken out of a map or a list is an interface {} to reflect; dot and a pipeline's result are not.
      const boxed = index > 0 || (node.kind === 'field' && this.boxedDot) || node.kind === 'variable'
      value = this.field(node, value, name, last && hasArgs, cmd, boxed)
    }

    return value
  }

  private field(node: ArgNode, receiver: GoValue, name: string, hasArgs: boolean, cmd: CommandNode | undefined, boxed: boolean): GoValue {
    const context = nodeText(node)
    if (receiver === MISSING) this.fail(node.pos, context, `nil data; no entry for key "${name}"`)
    if (receiver === null) this.fail(node.pos, context, `nil pointer evaluating interface {}.${name}`)
    if (receiver instanceof GoNumber) {
      const method = receiver.method(name)
      if (method !== undefined) return method
    }

    if (typeof receiver === 'object' && !Array.isArray(receiver) && !(receiver instanceof GoNumber) && !(receiver instanceof GoFloat)) {
      if (hasArgs) this.fail(cmd?.pos ?? node.pos, cmd ? nodeText(cmd) : context, `${name} is not a method but has arguments`)
      if (!Object.hasOwn(receiver, name)) this.fail(node.pos, context, `map has no entry for key "${name}"`)
      return receiver[name]
    }

    return this.fail(node.pos, context, `can't evaluate field ${name} in type ${boxed ? 'interface {}' : goTypeName(receiver)}`)
  }

  private call(dot: GoValue, cmd: CommandNode, name: string, args: ReadonlyArray<ArgNode | {kind: 'final'}>, final: GoValue): GoValue {
    const builtin = BUILTINS[name]
    // and/or evaluate their arguments lazily, as Go 1.18 does.
    const values = (): GoValue[] => args.map((arg) => (arg.kind === 'final' ? final : this.arg(dot, arg)))
    try {
      if (name === 'and' || name === 'or') return this.andOr(dot, name, args, final, cmd)
      return builtin(values())
    } catch (error) {
      if (error instanceof ExecError || error instanceof LoopControl) throw error
      const detail = (error as Error).message
      if (detail.startsWith('wrong number of args')) return this.fail(cmd.pos, nodeText(cmd), detail)
      return this.fail(cmd.pos, nodeText(cmd), `error calling ${name}: ${detail}`)
    }
  }

  private andOr(dot: GoValue, name: string, args: ReadonlyArray<ArgNode | {kind: 'final'}>, final: GoValue, cmd: CommandNode): GoValue {
    if (args.length === 0) this.fail(cmd.pos, nodeText(cmd), `wrong number of args for ${name}: want at least 1 got 0`)
    let value: GoValue = MISSING
    for (const arg of args) {
      value = arg.kind === 'final' ? final : this.arg(dot, arg)
      if (truthOf(value) === (name === 'or')) return value
    }

    return value
  }
}

/** printValue: nothing becomes `<no value>`, everything else prints as fmt.Fprint prints it. */
function printable(value: GoValue): string {
  return value === MISSING || value === null ? '<no value>' : goValueText(value)
}
