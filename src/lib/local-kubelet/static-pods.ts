/**
 * `run --static`: hand the pods to the kubelet that owns the runtime instead of running them. Each Pod
 * (a workload as its pod) is checked as `run` checks it, refused up front when it references an API
 * object (static-pod-references.ts), and written as a `kind: Pod` file into the kubelet's static pod
 * directory (static-pod-dir.ts): a dot-file first (the kubelet ignores those), then renamed, so the
 * kubelet never reads half a file. It runs the pod as `<name>-<node>` within its fileCheckFrequency
 * (20 s by default); podctl starts nothing and calls the runtime only to learn its endpoint.
 */
import {randomBytes} from 'node:crypto'
import {existsSync, lstatSync} from 'node:fs'
import {link, rename, rm, writeFile} from 'node:fs/promises'
import {join} from 'node:path'

import {AlreadyExistsError, UsageError} from '../errors.js'
import {fittedFileName} from '../util/file-names.js'
import {NAME_MAX} from '../util/path-component.js'
import {givenFlags} from '../util/given-flags.js'
import {podFullName} from '../kube/helpers.js'
import {PodctlAnnotation} from '../kube/labels.js'
import {type Json, type JsonObject, ManifestError} from '../manifest/fields.js'
import {checkImageReferences} from '../manifest/images.js'
import {expandManifestPaths, flatten, type LabelledDocument} from '../manifest/inputs.js'
import {ignoredFieldsWarning, parseDocuments, readInput, refuseIgnoredFields, sourceName} from '../manifest/load.js'
import {parsePod} from '../manifest/pod.js'
import {documentRole, listSkipped, type SkippedObject, skippedObject} from '../manifest/kinds.js'
import {podFromWorkload, type WorkloadKind} from '../manifest/workloads.js'
import {readStaticPodFile} from './static-pod-files.js'
import {FILE_CHECK_FREQUENCY, type StaticDirectory, type StaticDirOptions, staticPodDirectory} from './static-pod-dir.js'
import {refuseApiReferences} from './static-pod-references.js'

/** run's flags that mean nothing when the kubelet runs the pod. */
const CONFLICTS = ['supervise', 'rm', 'wait', 'keep-on-failure', 'force', 'volume', 'pod-config', 'container-config'] as const

export interface StaticRunFlags {
  filename?: string[]
  namespace?: string
  strict?: boolean
  replace?: boolean
  'dry-run'?: boolean
  'static-dir'?: string
  [flag: string]: unknown
}

export interface StaticPodFile {
  /** The pod's full name (name_namespace), as `run` names pods. */
  pod: string
  namespace: string
  /** The file written (or that would be), as podctl sees it. */
  file: string
  /** The name the kubelet gives the pod: `<name>-<node>`. */
  kubeletName: string
  replaced: boolean
}

export interface StaticRunResult {
  static: true
  dryRun?: true
  directory: string
  node: string
  pods: StaticPodFile[]
  /** --dry-run only: the manifests that would be written. */
  manifests?: string[]
}

export interface StaticRunDeps extends Omit<StaticDirOptions, 'staticDir'> {
  warn: (line: string) => void
}

/** A pod ready to be written: its names and the manifest text. */
interface StaticPod {
  name: string
  namespace: string
  text: string
}

/**
 * The file podctl writes a pod to: podctl-<namespace>_<name>.yaml (`_` is in neither, so names never
 * collide); cut with a digest when a long name would not fit one file name.
 */
export function staticPodFileName(namespace: string, name: string): string {
  return fittedFileName(`podctl-${namespace}_${name}`, '.yaml', NAME_MAX - STATIC_TEMPORARY_SUFFIX_BYTES)
}

/** run --static: every pod written into the static pod directory, or nothing when anything is refused. */
export async function handToKubelet(flags: StaticRunFlags, file: string | undefined, deps: StaticRunDeps): Promise<StaticRunResult> {
  refuseConflicts(flags)
  const pods = await loadStaticPods(flags, file, deps.warn)
  const directory = await staticPodDirectory({...deps, staticDir: flags['static-dir']})
  const planned = pods.map((pod) => ({pod, file: join(directory.path, staticPodFileName(pod.namespace, pod.name))}))
  const result = (replaced: (file: string) => boolean): StaticRunResult => ({
    static: true,
    directory: directory.path,
    node: directory.nodeName,
    pods: planned.map(({pod, file}) => ({
      pod: podFullName(pod.name, pod.namespace),
      namespace: pod.namespace,
      file,
      kubeletName: `${pod.name}-${directory.nodeName}`,
      replaced: replaced(file),
    })),
  })
  if (flags['dry-run']) return {...result(existsSync), dryRun: true, manifests: pods.map(({text}) => text)}
  // A link to nothing is there too (existsSync follows it): never written through.
  const present = new Set(planned.filter(({file}) => lstatSync(file, {throwIfNoEntry: false})).map(({file}) => file))
  for (const file of present) await refuseOverwrite(file, directory, flags.replace === true)
  for (const {pod, file} of planned) await writeAtomically(file, pod.text, present.has(file))
  return result((file) => present.has(file))
}

/** The human lines: where each pod went, the name it runs under, and how to watch it. */
export function describeStaticRun(result: StaticRunResult): string {
  if (result.dryRun)
    return (result.manifests ?? [])
      .map((text, index) => `# ${result.pods[index].file}\n${text}`)
      .join('---\n')
      .trimEnd()
  return result.pods
    .map(
      ({pod, file, kubeletName, replaced}) =>
        `pod ${pod}: ${replaced ? 'replaced' : 'written to'} ${file}; the kubelet runs it as ${kubeletName} within about ` +
        `${FILE_CHECK_FREQUENCY} (with an API server it shows up there as a read-only mirror pod); ` +
        `watch it with: podctl pods --name ${kubeletName}`,
    )
    .join('\n')
}

function refuseConflicts(flags: StaticRunFlags): void {
  const given = givenFlags(flags, CONFLICTS)
  if (given.length === 0) return
  const names = given.join(', ')
  const one = given.length === 1
  throw new UsageError(
    `--static hands the pods to the kubelet, which runs them itself, so ${names} ${one ? 'has' : 'have'} no meaning there; ` +
      `drop ${one ? 'it' : 'them'}, or run without --static`,
  )
}

/** The input's pods (workloads as their pod), checked as run checks them, with no API object reference left. */
async function loadStaticPods(flags: StaticRunFlags, file: string | undefined, warn: (line: string) => void): Promise<StaticPod[]> {
  const filename = flags.filename ?? []
  if (filename.length > 0 && file !== undefined)
    throw new UsageError(`give the manifest once: either ${file} or -f ${filename.join(' -f ')}`)
  const paths = filename.length > 0 ? filename : file === undefined ? [] : [file]
  if (paths.length === 0) throw new UsageError('no manifest: pass -f pod.yaml (- for stdin)')
  const documents: LabelledDocument[] = []
  for (const path of await expandManifestPaths(paths)) {
    const parsed = await parseDocuments(await readInput(path), sourceName(path))
    const label = (index: number) => (parsed.length > 1 ? `${sourceName(path)} (document ${index + 1})` : sourceName(path))
    documents.push(...parsed.map((document, index) => ({document, label: label(index)})))
  }

  // Kinds as run sorts them (manifest/kinds.ts); a workload becomes its pod once: its name has a random part.
  const skipped: SkippedObject[] = []
  const candidates = flatten(documents).flatMap(({document, label}): Array<{document: JsonObject; source: string}> => {
    const role = documentRole(document, label)
    if (role === 'pod') return [{document: object(document), source: label}]
    if (role === 'workload') return [podFromWorkload(object(document), object(document).kind as WorkloadKind, label)]
    // ConfigMaps, Secrets and claims only matter as references, which a static pod cannot have.
    if (role === 'skipped' || role === 'serviceAccount') skipped.push(skippedObject(document, label))
    return []
  })
  if (skipped.length > 0) warn(`not handed to the kubelet (they need an API server or a controller): ${listSkipped(skipped)}`)
  if (candidates.length === 0) throw new ManifestError(`${documents[0]?.label ?? 'the input'}: no Pod found`)
  refuseApiReferences(candidates.map(({document, source}) => ({document, label: nameIn(document) ?? source})))
  const models = candidates.map(({document, source}) => parsePod(document, source, {namespace: flags.namespace}))
  if (flags.strict) refuseIgnoredFields(models)
  checkImageReferences(models, 'manifest')
  const warning = ignoredFieldsWarning(models)
  if (warning) warn(warning)
  const seen = new Map<string, string>()
  for (const model of models) {
    const first = seen.get(podFullName(model.name, model.namespace))
    if (first)
      throw new ManifestError(`${model.source}: pod "${model.name}" in namespace "${model.namespace}" is already defined in ${first}`)
    seen.set(podFullName(model.name, model.namespace), model.source)
  }

  const yaml = await import('yaml')
  return candidates.map(({document}, index) => {
    const {name, namespace} = models[index]
    return {name, namespace, text: manifestText(yaml, staticManifest(document, name, namespace))}
  })
}

/** A v1 Pod of the pod's spec, named and marked as podctl's; uid and status are left for the kubelet. */
export function staticManifest(document: JsonObject, name: string, namespace: string): JsonObject {
  const metadata = {...object(document.metadata)}
  for (const key of ['uid', 'name', 'namespace']) delete metadata[key]
  const annotations = {...object(metadata.annotations), [PodctlAnnotation.staticPod]: 'true'}
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace, ...metadata, annotations}, spec: document.spec ?? {}}
}

function manifestText(yaml: typeof import('yaml'), manifest: JsonObject): string {
  const header = '# Written by podctl run --static for the kubelet to run; podctl kill --static removes it.\n'
  return header + yaml.stringify(manifest, {lineWidth: 0})
}

/**
 * An existing file is replaced only with --replace, and only when podctl wrote it: a regular file
 * holding a Pod with podctl's annotation. Anything else there — another's pod, a file that is no Pod,
 * a link, a FIFO — is left alone.
 */
async function refuseOverwrite(file: string, directory: StaticDirectory, replace: boolean): Promise<void> {
  const existing = await readStaticPodFile(file)
  if (!existing?.ours) {
    throw new UsageError(
      `${file} in the static pod directory was not written by podctl; it is left alone (remove it by hand to use the name)`,
    )
  }

  if (!replace) {
    throw new AlreadyExistsError(
      `${file} already exists in the static pod directory (from ${directory.source}); ` +
        'pass --replace to overwrite it, or remove it with podctl kill --static',
    )
  }
}

/** What the temporary file beside a static pod file adds to its name: `.` before, `.<16 hex>.tmp` after. */
const STATIC_TEMPORARY_SUFFIX_BYTES = '..0123456789abcdef.tmp'.length

/**
 * A dot-file the kubelet skips, then linked (new) or renamed (--replace) into place: the kubelet sees
 * the whole file or none. The temporary name is random and made with O_EXCL, which never follows a
 * link nor opens a file someone put there; a new file is linked, which fails rather than replace a
 * file that appeared since the check.
 */
async function writeAtomically(file: string, text: string, replace: boolean): Promise<void> {
  const slash = file.lastIndexOf('/')
  const temporary = `${file.slice(0, slash + 1)}.${file.slice(slash + 1)}.${randomBytes(8).toString('hex')}.tmp`
  try {
    await writeFile(temporary, text, {mode: 0o644, flag: 'wx'})
    await (replace ? rename(temporary, file) : link(temporary, file))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error)
    if (code === 'EEXIST' && !replace)
      throw new AlreadyExistsError(`${file} appeared in the static pod directory meanwhile; it is left alone`)
    throw new UsageError(`cannot write ${file} (${code}); the static pod directory needs write access (run as root?)`)
  } finally {
    await rm(temporary, {force: true})
  }
}

function nameIn(document: JsonObject): string | undefined {
  const name = object(document.metadata).name
  return typeof name === 'string' && name !== '' ? name : undefined
}

function object(value: Json | undefined): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {}
}
