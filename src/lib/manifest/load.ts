/**
 * Reads what `podctl run` is given — a Pod manifest (YAML or JSON, one or several documents,
 * from a file or `-` for stdin) or crictl's pod/container config pair — into validated pods.
 * Every problem is a ManifestError (usage, exit 2) naming the file, raised before any runtime call;
 * an invalid image reference is InvalidImageName (exit 11), also naming the field.
 */
import {close as closeFd, constants, createReadStream, open as openFd, read as readFd, type Stats} from 'node:fs'
import {readFile, stat} from 'node:fs/promises'
import {Socket} from 'node:net'
import {Readable} from 'node:stream'
import {isatty} from 'node:tty'

import {UsageError} from '../errors.js'
import {parseCrictlConfigs} from './crictl.js'
import {type Json, ManifestError} from './fields.js'
import {checkImageReferences, type InputForm} from './images.js'
import type {PodModel} from './model.js'
import {expandManifestPaths, type LabelledDocument, type ManifestContents, type PodsFromDocumentsOptions, readDocuments} from './inputs.js'
import {refuseSkipped, skippedWarning} from './kinds.js'
import {droppedFieldsWarning, ignoredFieldsWarning, refuseIgnoredFields} from './warnings.js'
import {syntaxProblem, wherePos} from './yaml-errors.js'

// Re-exported: run --static (local-kubelet) reads the input as run does.
export {ignoredFieldsWarning, refuseIgnoredFields} from './warnings.js'

export const STDIN = '-'

/** The API server's request body limit: no real Pod comes near it, and parsing stays within a few hundred MB. */
export const MAX_MANIFEST_BYTES = 3 * 1024 * 1024

/** The whole input as text; files, pipes, FIFOs and devices alike are read at most MAX_MANIFEST_BYTES far. */
export async function readInput(path: string, stdin: () => Promise<string> = readStdin): Promise<string> {
  if (path === STDIN) return stdin()
  const cannot = (error: unknown): never => {
    const code = (error as NodeJS.ErrnoException).code
    const reasons: Record<string, string> = {
      ENOENT: 'no such file',
      EISDIR: 'is a directory',
      EACCES: 'permission denied',
      ENOTDIR: 'no such file',
      ENXIO: 'no such device',
    }
    throw new ManifestError(`${path}: cannot read the manifest (${(code && reasons[code]) ?? code ?? firstLine(error)})`)
  }

  const info = await stat(path).catch(cannot)
  if (info.isDirectory()) return cannot(Object.assign(new Error('is a directory'), {code: 'EISDIR'}))
  if (info.isFile()) {
    if (info.size > MAX_MANIFEST_BYTES) throw tooLarge(path)
    const bytes = await readFile(path).catch(cannot)
    if (bytes.length > MAX_MANIFEST_BYTES) throw tooLarge(path)
    return bytes.toString('utf8')
  }

  const stream = await openStream(path, info).catch((error: unknown) =>
    error instanceof ManifestError ? Promise.reject(error) : cannot(error),
  )
  return collect(stream, path)
}

/**
 * Devices and FIFOs are streamed. A FIFO is opened without blocking, so one that no process writes
 * to is reported instead of hanging forever; a pipe from `<(...)` has its writer and is read to
 * the end. A terminal is refused.
 */
async function openStream(path: string, info: Stats): Promise<Readable> {
  if (info.isSocket()) throw new ManifestError(`${path}: cannot read the manifest (it is a socket); pass a file, or - for stdin`)
  const fifo = info.isFIFO()
  const fd = await new Promise<number>((resolve, reject) => {
    openFd(path, constants.O_RDONLY | (fifo ? constants.O_NONBLOCK : 0), (error, value) => (error ? reject(error) : resolve(value)))
  })
  if (isatty(fd)) {
    closeFd(fd, () => {})
    throw new ManifestError(`${path}: is a terminal; pass a file, or pipe the manifest to -f -`)
  }

  if (!fifo) return createReadStream('', {fd})
  // Linux never signals end-of-file on a FIFO that has had no writer, so ask once: a read of 0
  // bytes means nobody writes, EAGAIN means a writer is there and the stream can wait for it.
  const probe = Buffer.alloc(64 * 1024)
  const first = await new Promise<number | 'EAGAIN'>((resolve, reject) => {
    readFd(fd, probe, 0, probe.length, null, (error, bytes) => {
      if (error && (error as NodeJS.ErrnoException).code === 'EAGAIN') resolve('EAGAIN')
      else if (error) reject(error)
      else resolve(bytes)
    })
  }).catch((error: unknown) => {
    closeFd(fd, () => {})
    throw error
  })
  if (first === 0) {
    closeFd(fd, () => {})
    throw new ManifestError(`${path}: nothing writes to this FIFO; start the writer first, or pipe the manifest to -f -`)
  }

  const socket = new Socket({fd, readable: true, writable: false})
  if (first === 'EAGAIN') return socket
  return Readable.from(prepend(probe.subarray(0, first), socket))
}

async function* prepend(head: Buffer, rest: Readable): AsyncGenerator<Buffer> {
  yield head
  for await (const chunk of rest) yield chunk as Buffer
}

/** Reads a stream to its end, or stops with an error once it passes MAX_MANIFEST_BYTES (e.g. /dev/zero). */
async function collect(stream: Readable, source: string): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    size += (chunk as Buffer).length
    // Leaving the loop early destroys the stream (and closes a device or FIFO we opened).
    if (size > MAX_MANIFEST_BYTES) throw tooLarge(source)
    chunks.push(chunk as Buffer)
  }

  return Buffer.concat(chunks).toString('utf8')
}

export function tooLarge(source: string): ManifestError {
  return new ManifestError(
    `${source}: the manifest is larger than ${MAX_MANIFEST_BYTES / 1024 / 1024} MiB; ` +
      'podctl reads Pods up to that size (as the API server does)',
  )
}

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]
}

export function sourceName(path: string): string {
  return path === STDIN ? '<stdin>' : path
}

/**
 * kubectl reads YAML 1.1 (go-yaml), where a leading 0 makes an octal integer: `defaultMode: 0400`
 * in the Kubernetes docs is 256, not 400. ("0o400" is YAML 1.2's spelling and works too.)
 */
const YAML11_OCTAL = {
  identify: () => false,
  default: true,
  tag: 'tag:yaml.org,2002:int',
  test: /^[-+]?0[0-7_]+$/,
  resolve(text: string) {
    const digits = text.replaceAll('_', '')
    return (digits.startsWith('-') ? -1 : 1) * Number.parseInt(digits.replace(/^[-+]/, ''), 8)
  },
}

/**
 * Parses every non-empty YAML/JSON document of a file; syntax errors name the line. `positions`,
 * when given, gets each document's place in the file (1-based, empty and comment-only documents
 * counted), so messages name the document the user sees.
 */
export async function parseDocuments(text: string, source: string, positions?: number[]): Promise<Json[]> {
  const yaml = await import('yaml')
  // intAsBigInt: an integer beyond 2^53 keeps its exact value, so range checks see what was written.
  const documents = yaml.parseAllDocuments(text, {
    prettyErrors: true,
    uniqueKeys: true,
    intAsBigInt: true,
    customTags: (tags) => [YAML11_OCTAL, ...tags],
  })
  const list = Array.isArray(documents) ? documents : [documents]
  const out: Json[] = []
  for (const [position, document] of list.entries()) {
    const [error] = acceptQuoteEscapes(yaml, document, text)
    if (error) throw new ManifestError(`${source}: ${wherePos(error)}${syntaxProblem(error)} (not valid YAML or JSON)`)
    // The yaml library resolves an unknown tag (!js/function, !!binary, ...) to a plain string and only warns.
    const tag = document.warnings.find((warning) => warning.code === 'TAG_RESOLVE_FAILED')
    if (tag)
      throw new ManifestError(
        `${source}: ${wherePos(tag)}a YAML tag (!name) podctl does not read; remove the tag: podctl reads plain YAML or JSON`,
      )
    let value: unknown
    try {
      value = document.toJS({maxAliasCount: 100})
    } catch (error) {
      if (error instanceof ReferenceError && error.message.startsWith('Unresolved alias')) {
        throw new ManifestError(`${source}: a YAML alias (*name) names no anchor (&name) set before it (not valid YAML or JSON)`)
      }

      // An alias bomb ("billion laughs") stops here instead of expanding.
      if (error instanceof ReferenceError || error instanceof RangeError) {
        throw new ManifestError(`${source}: too many YAML alias expansions; write the repeated values out`)
      }

      throw error
    }

    if (value === null || value === undefined) continue
    out.push(smallIntegers(value as Json))
    positions?.push(position + 1)
  }

  return out
}

type YamlModule = typeof import('yaml')
type YamlError = import('yaml').YAMLError

/**
 * kubectl's YAML reader (go-yaml) takes `\'` in a double-quoted string as a quote, which YAML 1.2
 * does not: those scalars are decoded again with the escape turned into a plain `'`. The other
 * errors are returned.
 */
function acceptQuoteEscapes(yaml: YamlModule, document: {errors: YamlError[]}, text: string): YamlError[] {
  const quoteEscape = (error: YamlError) => error.code === 'BAD_DQ_ESCAPE' && error.message.includes(String.raw`\'`)
  const escapes = document.errors.filter((error) => quoteEscape(error))
  if (escapes.length === 0) return document.errors
  yaml.visit(document as never, {
    Scalar(_key, node) {
      const range = node.range
      if (node.type !== 'QUOTE_DOUBLE' || !range) return
      if (!escapes.some((error) => error.pos[0] >= range[0] && error.pos[0] < range[1])) return
      const raw = text.slice(range[0], range[1]).replaceAll(/\\(.)/gs, (match, char: string) => (char === "'" ? "'" : match))
      node.value = yaml.parse(raw)
    },
  })
  return document.errors.filter((error) => !quoteEscape(error))
}

/** bigint → number wherever the number is exact; larger integers stay bigints for the range checks. */
function smallIntegers(value: Json): Json {
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value
  }

  if (Array.isArray(value)) return value.map(smallIntegers)
  if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      const item = smallIntegers(value[key])
      if (item !== value[key]) value[key] = item
    }
  }

  return value
}

/** All Pods of the manifests (and the workloads' pod templates), with the ConfigMaps and Secrets beside them. */
export async function loadPodManifest(
  paths: string | readonly string[],
  options: PodsFromDocumentsOptions & {stdin?: () => Promise<string>} = {},
): Promise<PodModel[]> {
  return (await loadManifest(paths, options)).pods
}

/** Every document of the manifests, sorted by kind (inputs.ts): the pods, and the objects not run. */
export async function loadManifest(
  paths: string | readonly string[],
  options: PodsFromDocumentsOptions & {stdin?: () => Promise<string>; stdinSource?: string} = {},
): Promise<ManifestContents> {
  const files = await expandManifestPaths(typeof paths === 'string' ? [paths] : paths)
  const documents: LabelledDocument[] = []
  for (const path of files) {
    // The library API hands its manifest text in as stdin; messages name it as the caller does.
    const source = path === STDIN && options.stdinSource ? options.stdinSource : sourceName(path)
    const parsed = await labelledDocuments(await readInput(path, options.stdin), source)
    if (parsed.length === 0 && files.length === 1) throw new ManifestError(`${source}: no Pod found (the manifest is empty)`)
    documents.push(...parsed)
  }

  const contents = readDocuments(documents, options)
  rejectDuplicates(contents.pods)
  return contents
}

/** One file's documents, each labelled as messages name it: the file, and `(document N)` when it holds several. */
export async function labelledDocuments(text: string, source: string): Promise<LabelledDocument[]> {
  const positions: number[] = []
  const parsed = await parseDocuments(text, source, positions)
  return parsed.map((document, index) => ({document, label: parsed.length > 1 ? `${source} (document ${positions[index]})` : source}))
}

export async function loadCrictlConfigs(
  podPath: string,
  containerPath: string,
  options: {newUid?: () => string; stdin?: () => Promise<string>} = {},
): Promise<PodModel> {
  if (podPath === STDIN && containerPath === STDIN) throw new ManifestError('--pod-config and --container-config cannot both be - (stdin)')
  const [podText, containerText] = await Promise.all([readInput(podPath, options.stdin), readInput(containerPath, options.stdin)])
  const single = async (text: string, path: string) => {
    const documents = await parseDocuments(text, sourceName(path))
    if (documents.length !== 1) {
      throw new ManifestError(`${sourceName(path)}: must hold exactly one config document, found ${documents.length}`)
    }

    return documents[0]
  }

  return parseCrictlConfigs(
    {
      podConfig: await single(podText, podPath),
      podSource: sourceName(podPath),
      containerConfig: await single(containerText, containerPath),
      containerSource: sourceName(containerPath),
    },
    options,
  )
}

/** What `run` was given on its command line: -f FILE or the FILE argument, or crictl's two configs. */
export interface RunInput {
  /** -f, repeatable. */
  filename?: string | readonly string[]
  file?: string
  /** --volume NAME=DIR. */
  volumes?: readonly string[]
  podConfig?: string
  containerConfig?: string
  /** -n/--namespace for manifests that name none. */
  namespace?: string
  /** --strict: fields with no effect on a single node are refused instead of warned about. */
  strict?: boolean
  /** --replicas: every workload's replicas (and Jobs' completions). */
  replicas?: number
  /** What `-` reads (default: the process's stdin), and how messages name it (default <stdin>). */
  stdin?: () => Promise<string>
  stdinSource?: string
}

export interface LoadedPods {
  pods: PodModel[]
  /** Which input form was read, so messages name fields the way the user wrote them. */
  form: InputForm
  /** The one warning line about fields with no effect on a single node, if any. */
  warning?: string
  /** The summary lines before it: the objects not run, the fields dropped (each one line, if any). */
  notices?: string[]
}

/**
 * `run`'s input → validated pods, image references included; usage errors name the flags. The
 * form is known from the flags used, never guessed from the model.
 */
export async function loadRunInput(input: RunInput): Promise<LoadedPods> {
  const {file, podConfig, containerConfig, namespace} = input
  const filename =
    typeof input.filename === 'string' || input.filename === undefined || input.filename.length !== 1 ? input.filename : input.filename[0]
  if (Array.isArray(filename) && filename.length === 0) throw new UsageError('no manifest: pass -f pod.yaml (- for stdin)')
  if (filename !== undefined && file !== undefined) throw new UsageError(`give the manifest once: either ${file} or -f ${String(filename)}`)
  const manifest = filename ?? file
  let loaded: LoadedPods
  if (podConfig !== undefined || containerConfig !== undefined) {
    if (manifest !== undefined) {
      throw new UsageError('give either a Pod manifest (-f) or crictl configs (--pod-config/--container-config), not both')
    }

    if (podConfig === undefined || containerConfig === undefined) {
      throw new UsageError('crictl configs come in pairs: pass both --pod-config FILE and --container-config FILE')
    }

    loaded = {pods: [await loadCrictlConfigs(podConfig, containerConfig)], form: 'crictl'}
  } else {
    if (manifest === undefined) {
      throw new UsageError('no manifest: pass -f pod.yaml (- for stdin), or --pod-config FILE --container-config FILE')
    }

    const {volumes, replicas, stdin, stdinSource} = input
    const contents = await loadManifest(manifest, {namespace, volumes, replicas, stdin, stdinSource})
    if (input.strict) refuseSkipped(contents.skipped)
    const notice = skippedWarning(contents.skipped)
    loaded = {pods: contents.pods, form: 'manifest', ...(notice ? {notices: [notice]} : {})}
  }

  if (input.strict) refuseIgnoredFields(loaded.pods)
  checkImageReferences(loaded.pods, loaded.form)
  const dropped = droppedFieldsWarning(loaded.pods)
  if (dropped) loaded.notices = [...(loaded.notices ?? []), dropped]
  const warning = ignoredFieldsWarning(loaded.pods)
  return warning ? {...loaded, warning} : loaded
}

function rejectDuplicates(pods: PodModel[]): void {
  const seen = new Map<string, string>()
  for (const pod of pods) {
    const key = `${pod.name}_${pod.namespace}`
    const first = seen.get(key)
    if (first) throw new ManifestError(`${pod.source}: pod "${pod.name}" in namespace "${pod.namespace}" is already defined in ${first}`)
    seen.set(key, pod.source)
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new ManifestError('<stdin>: is a terminal; pipe a manifest in (e.g. cat pod.yaml | podctl run -f -)')
  return collect(process.stdin, '<stdin>')
}
