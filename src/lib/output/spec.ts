/**
 * The one `-o` parser. `-o table|wide|json|yaml|name|jsonpath=EXPR|go-template=TPL` (and crictl's
 * `--template TPL`) means the same on every command; each command only says which formats it
 * takes. Expressions are compiled here, so a typo is a usage error before any runtime call.
 */
import {UsageError} from '../errors.js'
import {toPlain} from '../util/plain.js'
import {compileJsonPath, compileTemplate, type Renderer} from './template.js'

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml' | 'name'

export type OutputSpec = {kind: OutputFormat} | {kind: 'jsonpath' | 'template'; render: Renderer}

/** What a command's `-o` takes (lib/flags.ts outputFlag keeps it on the flag). */
export interface OutputChoices {
  formats: readonly OutputFormat[]
  /** Also jsonpath=EXPR and go-template=TPL. */
  templates: boolean
  /** What no `-o` means. */
  fallback: OutputFormat
}

export interface ParseOutputOptions {
  /** Take jsonpath= and go-template= (default true). */
  templates?: boolean
  /** The command has crictl's `--template` flag, so a bare `-o go-template` can refer to it (default true). */
  templateFlag?: boolean
}

/**
 * Reads `-o json|yaml|…|jsonpath=EXPR|go-template=TPL|go-template` and `--template TPL` into one
 * spec, compiling the expression now so errors come before any runtime call.
 */
export function parseOutputSpec(
  output: string | undefined,
  template: string | undefined,
  allowed: readonly OutputFormat[],
  fallback: OutputFormat,
  options: ParseOutputOptions = {},
): OutputSpec {
  const templates = options.templates ?? true
  const value = output?.trim()
  const formats = [...allowed, ...(templates ? ['jsonpath=EXPR', 'go-template=TPL'] : [])].join('|')
  if (value === undefined || value === '' || (templates && value === 'go-template')) {
    if (template !== undefined) return {kind: 'template', render: compileTemplate(template)}
    if (value === 'go-template') {
      if (options.templateFlag === false) throw new UsageError(`-o go-template needs a template, e.g. -o go-template='{{.items}}'`)
      throw new UsageError('-o go-template needs --template TPL (or use -o go-template=TPL)')
    }

    return {kind: fallback}
  }

  const eq = value.indexOf('=')
  const name = eq === -1 ? value : value.slice(0, eq)
  const argument = eq === -1 ? undefined : value.slice(eq + 1)
  if (template !== undefined) throw new UsageError(`--template cannot be used with -o ${name}; drop -o or use -o go-template`)
  if (templates && name === 'jsonpath') {
    if (!argument) throw new UsageError(`-o jsonpath needs an expression, e.g. -o jsonpath='{.status.state}'`)
    return {kind: 'jsonpath', render: compileJsonPath(argument)}
  }

  if (templates && (name === 'go-template' || name === 'template')) {
    if (!argument) throw new UsageError(`-o ${name}= needs a template, e.g. -o ${name}='{{.status.id}}'`)
    return {kind: 'template', render: compileTemplate(argument)}
  }

  if (argument === undefined && (allowed as readonly string[]).includes(name)) return {kind: name as OutputFormat}
  throw new UsageError(`-o "${value}" is not a format here; use ${formats}`)
}

/** Whether the spec is for scripts (json, yaml, jsonpath, go-template) rather than people (table, wide, name). */
export function isMachineOutput(spec: OutputSpec): boolean {
  return spec.kind !== 'table' && spec.kind !== 'wide' && spec.kind !== 'name'
}

/** Renders each document on its own line (several IDs give several lines, never a list to range over). */
export function renderEach(render: Renderer, documents: readonly unknown[]): string {
  return documents.map((document) => render(toPlain(document))).join('\n')
}
