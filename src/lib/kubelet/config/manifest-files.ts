/**
 * The pods of a watched manifest directory (manifest-source.ts), file by file. Each file stands or
 * falls alone: one that does not parse, is empty or is refused gets its error (never quoting its
 * content) and leaves the other files' pods alone. Files holding only ConfigMaps, Secrets, ServiceAccounts and PersistentVolumeClaims
 * feed the pods of every other file of the same directory — which the kubelet's static pods cannot
 * have — and a pod file's own objects feed its own pods, as in `run -f`.
 */
import {createHash} from 'node:crypto'
import {dirname} from 'node:path'

import {PodctlError} from '../../errors.js'
import {checkImageReferences} from '../../manifest/images.js'
import {documentRole, skippedWarning} from '../../manifest/kinds.js'
import {flatten, type LabelledDocument, readDocuments} from '../../manifest/inputs.js'
import {labelledDocuments} from '../../manifest/load.js'
import type {PodModel} from '../../manifest/model.js'
import {droppedFieldsWarning, ignoredFieldsWarning} from '../../manifest/warnings.js'
import {checkPodReferences} from '../volumes/pod-objects.js'
import {resolveClaims} from '../volumes/claims.js'

export interface ManifestFile {
  /** Absolute path. */
  path: string
  text: string
}

export interface FileReading {
  path: string
  /** sha256 of the text: the same content is never read, reported or applied twice. */
  digest: string
  /** Its pods (none for a file of ConfigMaps and the like), when the file is valid. */
  pods?: PodModel[]
  /** Why the file cannot be run (one message, naming the file, the document and the field). */
  error?: string
  /** Warnings of a valid file: objects not run, fields dropped or ignored. */
  warnings: string[]
  /** Digest of the object-only files that fed its pods: a changed ConfigMap beside a pod changes the pod. */
  feedDigest?: string
}

export interface ReadingOptions {
  /** The namespace of pods that name none (-n). */
  namespace?: string
  claimsRoot: string
  /** Makes uids (tests pass fixed ones). */
  newUid?: () => string
}

const FEEDING_ROLES = new Set(['object', 'serviceAccount', 'claim'])

export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/**
 * Each file's documents as last parsed, by path and content: a watched source reads every file on
 * every change, and a file that did not change is not parsed again (a 3 MiB one takes a second or
 * more, all of it blocking). Handed out as copies, so no reader can change what the next one gets.
 */
export class ParsedFiles {
  private readonly entries = new Map<string, {digest: string; documents: LabelledDocument[] | string}>()

  constructor(private readonly parse: (file: ManifestFile) => Promise<LabelledDocument[] | string> = parseFile) {}

  async documentsOf(file: ManifestFile): Promise<LabelledDocument[] | string> {
    const digest = digestOf(file.text)
    let entry = this.entries.get(file.path)
    if (entry?.digest !== digest) {
      entry = {digest, documents: await this.parse(file)}
      this.entries.set(file.path, entry)
    }

    return structuredClone(entry.documents)
  }

  /** Forgets the files not among `paths` (gone, or no longer read). */
  keepOnly(paths: ReadonlySet<string>): void {
    for (const path of this.entries.keys()) if (!paths.has(path)) this.entries.delete(path)
  }
}

/** Reads every file; files of one directory share the objects of its object-only files. */
export async function readManifestFiles(
  files: readonly ManifestFile[],
  options: ReadingOptions,
  cache?: ParsedFiles,
): Promise<FileReading[]> {
  const parse = (file: ManifestFile) => cache?.documentsOf(file) ?? parseFile(file)
  const parsed = await Promise.all(files.map(async (file) => ({file, documents: await parse(file)})))
  cache?.keepOnly(new Set(files.map((file) => file.path)))
  const feeding = new Map<string, LabelledDocument[]>()
  const readings = new Map<string, FileReading>()
  const feedDigests = new Map<string, string>()
  // Object-only files first: each checked alone, then shared with the pod files of its directory.
  for (const {file, documents} of parsed) {
    const reading: FileReading = {path: file.path, digest: digestOf(file.text), warnings: []}
    readings.set(file.path, reading)
    if (typeof documents === 'string') {
      reading.error = documents
      continue
    }

    const roles = rolesOf(documents)
    if (typeof roles === 'string') reading.error = roles
    else if (roles.every((role) => FEEDING_ROLES.has(role) || role === 'skipped')) {
      const checked = attempt(() => readDocuments(documents, {...options, allowNoPods: true}))
      if (typeof checked === 'string') reading.error = checked
      else {
        reading.pods = []
        const directory = dirname(file.path)
        // Only what feeds pods is shared: a Service beside them is said once, by its own file.
        const feeds = flatten(documents).filter(({document, label}) => FEEDING_ROLES.has(documentRole(document, label)))
        feeding.set(directory, [...(feeding.get(directory) ?? []), ...feeds])
        feedDigests.set(directory, digestOf(`${feedDigests.get(directory) ?? ''}${reading.digest}`))
        reading.warnings = [skippedWarning(checked.skipped)].filter((line): line is string => line !== undefined)
      }
    }
  }

  for (const {file, documents} of parsed) {
    const reading = readings.get(file.path)!
    if (reading.error || reading.pods || typeof documents === 'string') continue
    const shared = feeding.get(dirname(file.path)) ?? []
    const read = attempt(() => podsOf(documents, shared, options))
    if (typeof read === 'string') reading.error = read
    else Object.assign(reading, read, {feedDigest: feedDigests.get(dirname(file.path)) ?? ''})
  }

  return files.map((file) => readings.get(file.path)!)
}

async function parseFile(file: ManifestFile): Promise<LabelledDocument[] | string> {
  try {
    const documents = await labelledDocuments(file.text, file.path)
    // An editor's truncate-then-write, or a file emptied by mistake: the kubelet ignores an empty file too.
    if (documents.length === 0) return `${file.path} is empty (no YAML or JSON document in it); remove the file to remove its pods`
    return documents
  } catch (error) {
    return messageOf(error)
  }
}

function rolesOf(documents: LabelledDocument[]): string[] | string {
  return attempt(() => flatten(documents).map(({document, label}) => documentRole(document, label)))
}

/** The checks `run -f` makes, for one file's pods (their objects: the file's own and its directory's). */
function podsOf(documents: LabelledDocument[], shared: LabelledDocument[], options: ReadingOptions): Omit<FileReading, 'path' | 'digest'> {
  const contents = readDocuments([...documents, ...shared], {namespace: options.namespace, newUid: options.newUid})
  const {pods} = contents
  checkImageReferences(pods, 'manifest')
  checkPodReferences(pods)
  resolveClaims(pods, options.claimsRoot)
  const warnings = [skippedWarning(contents.skipped), droppedFieldsWarning(pods), ignoredFieldsWarning(pods)]
  return {pods, warnings: [...warnings.filter((line): line is string => line !== undefined), ...pods.flatMap((pod) => pod.warnings ?? [])]}
}

function attempt<T>(read: () => T): T | string {
  try {
    return read()
  } catch (error) {
    return messageOf(error)
  }
}

/** A refusal of the input (ManifestError, a missing ConfigMap's PodFailedError, ...) is the file's error; a bug is not hidden. */
function messageOf(error: unknown): string {
  if (error instanceof PodctlError) return error.message
  throw error
}
