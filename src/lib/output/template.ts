/**
 * Picking fields out of a JSON document, for scripts: a small Go-template dialect
 * (`{{.status.id}}`, `{{index .status.labels "app"}}`, `{{.status | json}}`) and kubectl-style
 * JSONPath (`{.status.state}`, `{.status.mounts[*].hostPath}`). Both are compiled up front so a
 * typo is a usage error before any runtime call, and a missing key is an error, not a blank.
 */
import {UsageError} from '../errors.js'

export type Renderer = (document: unknown) => string

type Json = unknown

/** Scalars print bare, null prints nothing, objects and arrays print as compact JSON. */
export function formatValue(value: Json): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

function describe(path: string): string {
  return path === '' ? '.' : path
}

function field(value: Json, key: string, path: string, syntax: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(`${syntax}: ${describe(path)} is ${kindOf(value)}, it has no field "${key}"`)
  }

  if (!Object.hasOwn(value, key)) {
    const keys = Object.keys(value)
    const hint = keys.length > 0 ? ` (it has: ${keys.slice(0, 12).join(', ')}${keys.length > 12 ? ', …' : ''})` : ''
    throw new UsageError(`${syntax}: no field "${key}" at ${describe(path)}${hint}`)
  }

  return (value as Record<string, Json>)[key]
}

function element(value: Json, index: number, path: string, syntax: string): Json {
  if (!Array.isArray(value)) throw new UsageError(`${syntax}: ${describe(path)} is ${kindOf(value)}, not a list; cannot take [${index}]`)
  const at = index < 0 ? value.length + index : index
  if (at < 0 || at >= value.length) {
    throw new UsageError(`${syntax}: index ${index} is out of range at ${describe(path)} (length ${value.length})`)
  }

  return value[at]
}

function kindOf(value: Json): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'a list'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

// ---------------------------------------------------------------- Go-template dialect

type Arg = {kind: 'path'; segments: string[]; text: string} | {kind: 'literal'; value: Json}
type Stage = {fn?: string; args: Arg[]}

const FUNCTIONS: Record<string, (args: Json[]) => Json> = {
  json: (args) => JSON.stringify(args.at(-1) ?? null),
  upper: (args) => formatValue(args.at(-1)).toUpperCase(),
  lower: (args) => formatValue(args.at(-1)).toLowerCase(),
  len(args) {
    const value = args.at(-1)
    if (Array.isArray(value) || typeof value === 'string') return value.length
    if (value !== null && typeof value === 'object') return Object.keys(value).length
    throw new UsageError(`template: len of ${kindOf(value)}`)
  },
  index: ([target, ...keys]) =>
    keys.reduce<Json>((value, key, i) => {
      const where = `index argument ${i + 2}`
      if (typeof key === 'number') return element(value, key, where, 'template')
      return field(value, String(key), where, 'template')
    }, target),
}

const UNSUPPORTED = /^(range|if|with|else|end|define|template|block)\b/

function tokenizeArgs(source: string, action: string): string[] {
  const tokens: string[] = []
  const re = /\s*("(?:[^"\\]|\\.)*"|`[^`]*`|[^\s"`]+)/gy
  let match: RegExpExecArray | null
  let last = 0
  while ((match = re.exec(source)) !== null) {
    tokens.push(match[1])
    last = re.lastIndex
  }

  if (source.slice(last).trim() !== '') throw new UsageError(`template: cannot parse {{${action}}}`)
  return tokens
}

function parseArg(token: string, action: string): Arg {
  if (token === '.') return {kind: 'path', segments: [], text: '.'}
  if (token.startsWith('.')) {
    const segments = token.slice(1).split('.')
    if (segments.some((segment) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment))) {
      throw new UsageError(`template: bad field path ${token} in {{${action}}}; for keys with dots use {{index .labels "a.b"}}`)
    }

    return {kind: 'path', segments, text: token}
  }

  if (token.startsWith('"')) {
    try {
      return {kind: 'literal', value: JSON.parse(token) as string}
    } catch {
      throw new UsageError(`template: bad string ${token} in {{${action}}}`)
    }
  }

  if (token.startsWith('`')) return {kind: 'literal', value: token.slice(1, -1)}
  if (/^-?\d+$/.test(token)) return {kind: 'literal', value: Number(token)}
  if (token === 'true' || token === 'false') return {kind: 'literal', value: token === 'true'}
  throw new UsageError(`template: unknown "${token}" in {{${action}}}; fields start with a dot (.status.id)`)
}

function splitPipes(action: string): string[] {
  const parts: string[] = []
  let current = ''
  let quote = ''
  for (const ch of action) {
    if (quote) {
      if (ch === quote && !current.endsWith('\\')) quote = ''
    } else if (ch === '"' || ch === '`') quote = ch
    else if (ch === '|') {
      parts.push(current)
      current = ''
      continue
    }

    current += ch
  }

  parts.push(current)
  return parts
}

function parseAction(action: string): Stage[] {
  const trimmed = action.trim()
  if (trimmed === '') throw new UsageError('template: empty action {{}}')
  if (UNSUPPORTED.test(trimmed)) {
    throw new UsageError(
      `template: {{${trimmed}}} is not supported; podctl templates take field paths (.a.b) and the functions index, json, len, upper, ` +
        'lower (one object per input is rendered, so no range is needed)',
    )
  }

  return splitPipes(trimmed).map((part, i) => {
    const tokens = tokenizeArgs(part.trim(), trimmed)
    if (tokens.length === 0) throw new UsageError(`template: empty pipeline stage in {{${trimmed}}}`)
    const [head, ...rest] = tokens
    if (FUNCTIONS[head]) return {fn: head, args: rest.map((token) => parseArg(token, trimmed))}
    if (i > 0) throw new UsageError(`template: "${head}" is not a function (index, json, len, upper, lower) in {{${trimmed}}}`)
    if (rest.length > 0) throw new UsageError(`template: unexpected "${rest[0]}" after ${head} in {{${trimmed}}}`)
    return {args: [parseArg(head, trimmed)]}
  })
}

function evalArg(arg: Arg, root: Json): Json {
  if (arg.kind === 'literal') return arg.value
  let value = root
  let path = ''
  for (const segment of arg.segments) {
    value = field(value, segment, path, 'template')
    path += `.${segment}`
  }

  return value
}

/** Compiles `{{.a.b}}`-style text; `{{-`/`-}}` trim the whitespace beside them as in Go. */
export function compileTemplate(source: string): Renderer {
  const parts: Array<string | Stage[]> = []
  const re = /\{\{(-\s)?([\s\S]*?)(\s-)?\}\}/g
  let last = 0
  let trimNext = false
  let match: RegExpExecArray | null
  while ((match = re.exec(source)) !== null) {
    let text = source.slice(last, match.index)
    if (trimNext) text = text.trimStart()
    if (match[1]) text = text.trimEnd()
    if (text) parts.push(text)
    parts.push(parseAction(match[2]))
    trimNext = Boolean(match[3])
    last = re.lastIndex
  }

  let tail = source.slice(last)
  if (trimNext) tail = tail.trimStart()
  if (tail.includes('{{')) throw new UsageError('template: unclosed action "{{"; close it with "}}"')
  if (tail) parts.push(tail)

  return (document) =>
    parts
      .map((part) => {
        if (typeof part === 'string') return part
        let value: Json
        for (const [i, stage] of part.entries()) {
          const args = stage.args.map((arg) => evalArg(arg, document))
          if (i > 0) args.push(value)
          value = stage.fn ? FUNCTIONS[stage.fn](args) : args[0]
        }

        return formatValue(value)
      })
      .join('')
}

// ---------------------------------------------------------------- JSONPath (kubectl subset)

type Step = {kind: 'field'; key: string} | {kind: 'index'; index: number} | {kind: 'all'}
type JsonPathPart = string | {steps: Step[]; text: string} | {literal: string}

function parseJsonPathExpression(expression: string): Step[] | {literal: string} {
  let source = expression.trim()
  if (/^(range|end)\b/.test(source)) {
    throw new UsageError(`jsonpath: {${source}} is not supported; one object per input is rendered, so select fields directly`)
  }

  if (source.startsWith('"')) {
    try {
      return {literal: JSON.parse(source) as string}
    } catch {
      throw new UsageError(`jsonpath: bad string literal {${source}}`)
    }
  }

  if (source.startsWith('$')) source = source.slice(1)
  const steps: Step[] = []
  let i = 0
  const fail = (why: string): never => {
    throw new UsageError(`jsonpath: ${why} in {${expression}}; e.g. {.status.state} or {.status.labels['app']}`)
  }

  while (i < source.length) {
    const ch = source[i]
    if (ch === '.') {
      if (source[i + 1] === '.') fail('recursive descent ".." is not supported')
      const match = /^[^.[\]\s]*/.exec(source.slice(i + 1))![0]
      if (match === '') {
        if (i + 1 === source.length && steps.length === 0) break // "{.}" is the whole document
        fail('empty field name')
      }

      steps.push(match === '*' ? {kind: 'all'} : {kind: 'field', key: match})
      i += 1 + match.length
    } else if (ch === '[') {
      const close = source.indexOf(']', i)
      if (close === -1) fail('unclosed "["')
      const inner = source.slice(i + 1, close).trim()
      if (inner === '*') steps.push({kind: 'all'})
      else if (/^-?\d+$/.test(inner)) steps.push({kind: 'index', index: Number(inner)})
      else if (/^'[^']*'$|^"[^"]*"$/.test(inner)) steps.push({kind: 'field', key: inner.slice(1, -1)})
      else fail(`"[${inner}]" is not an index, [*] or a quoted key`)
      i = close + 1
    } else if (steps.length === 0 && /[A-Za-z_]/.test(ch)) {
      // kubectl accepts "{status.state}" for "{.status.state}"
      source = `.${source.slice(i)}`
      i = 0
    } else {
      fail(`unexpected "${ch}"`)
    }
  }

  return steps
}

/** Compiles kubectl-style JSONPath: `{.a.b}`, `{.a[0]}`, `{.a[*].b}`, `{.labels['k.with.dots']}`, text between. */
export function compileJsonPath(source: string): Renderer {
  // kubectl's relaxed form: ".status.state" means "{.status.state}".
  const template = source.includes('{') ? source : `{${source}}`
  const parts: JsonPathPart[] = []
  let i = 0
  while (i < template.length) {
    const open = template.indexOf('{', i)
    if (open === -1) {
      parts.push(template.slice(i))
      break
    }

    if (open > i) parts.push(template.slice(i, open))
    const close = template.indexOf('}', open)
    if (close === -1) throw new UsageError(`jsonpath: unclosed "{" in ${source}`)
    const expression = template.slice(open + 1, close)
    const parsed = parseJsonPathExpression(expression)
    parts.push(Array.isArray(parsed) ? {steps: parsed, text: expression} : parsed)
    i = close + 1
  }

  return (document) =>
    parts
      .map((part) => {
        if (typeof part === 'string') return part
        if ('literal' in part) return part.literal
        return evalSteps(part.steps, document).map(formatValue).join(' ')
      })
      .join('')
}

function evalSteps(steps: readonly Step[], document: Json): Json[] {
  let values: Json[] = [document]
  let path = ''
  for (const step of steps) {
    const next: Json[] = []
    for (const value of values) {
      if (step.kind === 'field') next.push(field(value, step.key, path, 'jsonpath'))
      else if (step.kind === 'index') next.push(element(value, step.index, path, 'jsonpath'))
      else if (Array.isArray(value)) next.push(...value)
      else if (value !== null && typeof value === 'object') next.push(...Object.values(value))
      else throw new UsageError(`jsonpath: ${describe(path)} is ${kindOf(value)}; [*] needs a list or object`)
    }

    path += step.kind === 'field' ? `.${step.key}` : step.kind === 'index' ? `[${step.index}]` : '[*]'
    values = next
  }

  return values
}
