/**
 * Commands stay thin (issue 7): they parse flags, make named domain calls and render; they never
 * speak CRI. The RPC names come from the generated service definitions, so a new RPC is covered
 * without editing this test.
 */
import {readdirSync, readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {ImageServiceService, RuntimeServiceService} from '../../src/generated/runtime/v1/api.js'

const MAX_FILE_LINES = 250
const MAX_RUN_LINES = 40

const commandsDir = new URL('../../src/commands/', import.meta.url)
const commandFiles = readdirSync(commandsDir).filter((file) => file.endsWith('.ts'))

/** Every CRI method, as the client names it (listPodSandbox) and as the wire does (ListPodSandbox). */
const rpcNames = [RuntimeServiceService, ImageServiceService].flatMap((service) =>
  Object.entries(service).map(([method, definition]) => ({method, rpc: definition.path.slice(definition.path.lastIndexOf('/') + 1)})),
)

/** Where a source names a CRI call: the transport's methods, an RPC name in code, the generated services or grpc-js. */
export function criCalls(source: string): string[] {
  const code = source
    .replaceAll(/\/\*[\s\S]*?\*\//g, '')
    .replaceAll(/^\s*\/\/.*$/gm, '')
    // Help texts may say "One ListPodSandbox call"; only code counts.
    .replaceAll(/static override (summary|description) = (`(?:[^`\\]|\\[\s\S])*`|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")/g, '')
  const found: string[] = []
  for (const match of code.matchAll(/\.(runtime|runtimeOptional|image)\s*(<[^>]*>)?\s*\(/g)) found.push(match[0])
  for (const {method, rpc} of rpcNames) {
    // One-word RPCs (status, version, exec) are ordinary words in code; they are caught as call arguments above.
    if (/[A-Z]/.test(method) && new RegExp(`['"\`]${method}['"\`]`).test(code)) found.push(`'${method}'`)
    if (new RegExp(`\\.(${method}|${rpc})\\s*\\(`).test(code)) found.push(`.${method}(`)
  }

  const banned = ['@grpc/grpc-js', "generated/runtime/v1/api.js'", 'RuntimeServiceService', 'ImageServiceService', 'cri/client.js']
  for (const word of banned) {
    if (code.includes(word) && !new RegExp(`import type [^\\n]*${word.replaceAll('.', String.raw`\.`)}`).test(code)) found.push(word)
  }

  return found
}

/** Lines of `public async run(` up to its closing brace. */
export function runLength(source: string): number {
  const lines = source.split('\n')
  const start = lines.findIndex((line) => /^ {2}public async run\(/.test(line))
  if (start === -1) return 0
  const end = lines.findIndex((line, index) => index > start && line === '  }')
  return end - start + 1
}

describe('commands are thin', () => {
  it('finds the command files', () => {
    expect(commandFiles.length).toBeGreaterThan(10)
    expect(rpcNames.map((name) => name.method)).toEqual(expect.arrayContaining(['listPodSandbox', 'removeImage', 'status']))
  })

  it.each(commandFiles)('%s names no CRI method', (file) => {
    expect(criCalls(readFileSync(new URL(file, commandsDir), 'utf8'))).toEqual([])
  })

  it.each(commandFiles)(`%s is at most ${MAX_FILE_LINES} lines, its run() at most ${MAX_RUN_LINES}`, (file) => {
    const source = readFileSync(new URL(file, commandsDir), 'utf8')
    expect(source.trimEnd().split('\n').length).toBeLessThanOrEqual(MAX_FILE_LINES)
    expect(runLength(source)).toBeLessThanOrEqual(MAX_RUN_LINES)
  })

  it('catches what it is meant to catch', () => {
    const fat = `
  static override description = \`One ListPodSandbox call\`
  public async run(): Promise<void> {
    const {items} = await client.runtime('listPodSandbox', {})
    await client.image<'removeImage'>('removeImage', {image: {image: id}})
    await stub.ListContainers({})
  }
`
    expect(criCalls(fat)).toEqual(expect.arrayContaining(['.runtime(', "'listPodSandbox'", "'removeImage'", '.listContainers(']))
    expect(criCalls("static override description = `One ListPodSandbox and one ListContainers call`\nconst status = 'ok'")).toEqual([])
    expect(criCalls("import {CriClient} from '../lib/cri/client.js'")).toEqual(['cri/client.js'])
    expect(criCalls("import type {PodSandbox} from '../generated/runtime/v1/api.js'")).toEqual([])
    expect(runLength(fat)).toBe(5)
  })
})
