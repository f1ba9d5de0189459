/**
 * Reads what `podctl run` is given — a Pod manifest (YAML or JSON, one or several documents,
 * from a file or `-` for stdin) or crictl's pod/container config pair — into validated pods.
 * Every problem is a ManifestError (usage, exit 2) naming the file, raised before any runtime call;
 * an invalid image reference is InvalidImageName (exit 11), also naming the field.
 */
import {readFile} from 'node:fs/promises'

import {UsageError} from '../errors.js'
import {parseCrictlConfigs} from './crictl.js'
import {ManifestError, type Json} from './fields.js'
import {checkImageReferences, type InputForm} from './images.js'
import type {PodModel} from './model.js'
import {parsePod, type ParsePodOptions} from './pod.js'

export const STDIN = '-'

export async function readInput(path: string, stdin: () => Promise<string> = readStdin): Promise<string> {
  if (path === STDIN) return stdin()
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : code
    throw new ManifestError(`${path}: cannot read the manifest (${why})`)
  }
}

export function sourceName(path: string): string {
  return path === STDIN ? '<stdin>' : path
}

/** Parses every non-empty YAML/JSON document of a file; syntax errors name the line. */
export async function parseDocuments(text: string, source: string): Promise<Json[]> {
  const {parseAllDocuments} = await import('yaml')
  const documents = parseAllDocuments(text, {prettyErrors: true, uniqueKeys: true})
  const list = Array.isArray(documents) ? documents : [documents]
  const out: Json[] = []
  for (const document of list) {
    const [error] = document.errors
    if (error) {
      const where = error.linePos ? `line ${error.linePos[0].line}, column ${error.linePos[0].col}: ` : ''
      const message = error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')
      throw new ManifestError(`${source}: ${where}${message} (not valid YAML or JSON)`)
    }

    const value = document.toJS({maxAliasCount: 100}) as Json
    if (value !== null && value !== undefined) out.push(value)
  }

  return out
}

/** All Pods of a manifest; several documents run several pods (each named uniquely). */
export async function loadPodManifest(path: string, options: ParsePodOptions & {stdin?: () => Promise<string>} = {}): Promise<PodModel[]> {
  const source = sourceName(path)
  const documents = await parseDocuments(await readInput(path, options.stdin), source)
  if (documents.length === 0) throw new ManifestError(`${source}: no Pod found (the manifest is empty)`)
  const pods = documents.map((document, index) => {
    const label = documents.length > 1 ? `${source} (document ${index + 1})` : source
    return parsePod(document, label, options)
  })
  rejectDuplicates(pods)
  return pods
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
  filename?: string
  file?: string
  podConfig?: string
  containerConfig?: string
}

export interface LoadedPods {
  pods: PodModel[]
  /** Which input form was read, so messages name fields the way the user wrote them. */
  form: InputForm
}

/**
 * `run`'s input → validated pods, image references included; usage errors name the flags. The
 * form is known from the flags used, never guessed from the model.
 */
export async function loadRunInput(input: RunInput): Promise<LoadedPods> {
  const {filename, file, podConfig, containerConfig} = input
  if (filename !== undefined && file !== undefined) throw new UsageError(`give the manifest once: either ${file} or -f ${filename}`)
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

    loaded = {pods: await loadPodManifest(manifest), form: 'manifest'}
  }

  checkImageReferences(loaded.pods, loaded.form)
  return loaded
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
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
