/**
 * `kill -f FILE|DIR|-`: the pods a manifest would create, as `kubectl delete -f` finds them — each
 * Pod by name_namespace, each workload by what identifies its pods (labels, the form of their
 * names: inputs.ts podMatchesFromDocuments), since its replicas made from an older template have other names. Files and
 * directories are read as `run -f` reads them.
 */
import {UsageError} from '../errors.js'
import {ManifestError} from './fields.js'
import {expandManifestPaths, type LabelledDocument, podMatchesFromDocuments} from './inputs.js'
import {parseDocuments, readInput, sourceName} from './load.js'
import type {WorkloadMatch} from './workload-names.js'

export interface ManifestPods {
  /** The Pods' full names (name_namespace). */
  refs: string[]
  workloads: WorkloadMatch[]
}

/** The pods of every manifest; namespace (-n) is that of the objects that name none. */
export async function loadManifestPods(
  paths: readonly string[],
  options: {namespace?: string; stdin?: () => Promise<string>} = {},
): Promise<ManifestPods> {
  const documents: LabelledDocument[] = []
  for (const path of await expandManifestPaths(paths)) {
    const source = sourceName(path)
    const parsed = await parseDocuments(await readInput(path, options.stdin), source)
    documents.push(
      ...parsed.map((document, index) => ({document, label: parsed.length > 1 ? `${source} (document ${index + 1})` : source})),
    )
  }

  if (documents.length === 0) throw new ManifestError(`${paths.map(sourceName).join(', ')}: no Pod found (the manifest is empty)`)
  const out: ManifestPods = {refs: [], workloads: []}
  for (const match of podMatchesFromDocuments(documents)) {
    const named = 'workload' in match ? match.workload.namespace : match.pod.namespace
    if (named && options.namespace && named !== options.namespace) {
      const fix = `pass --namespace ${named}, or leave it out`
      throw new ManifestError(`${match.source}: metadata.namespace "${named}" does not match --namespace ${options.namespace}; ${fix}`)
    }

    if ('workload' in match) {
      const {workload} = match
      out.workloads.push(workload.namespace || !options.namespace ? workload : {...workload, namespace: options.namespace})
    } else {
      const refs = `${match.pod.name}_${match.pod.namespace ?? options.namespace ?? 'default'}`
      if (!out.refs.includes(refs)) out.refs.push(refs)
    }
  }

  return out
}

/** kill's selection with -f: the manifest's pods in place of POD names, --all or --label (which it cannot be combined with). */
export async function withManifestPods<S extends {refs: readonly string[]; namespace?: string; labels?: object; all?: boolean}>(
  selection: S,
  paths: readonly string[] | undefined,
): Promise<S & {workloads?: WorkloadMatch[]}> {
  if (!paths?.length) return selection
  if (selection.refs.length > 0) throw new UsageError('give either POD names or -f FILE, not both')
  if (selection.all || Object.keys(selection.labels ?? {}).length > 0)
    throw new UsageError('give either -f FILE or --all/--label, not both')
  const {refs, workloads} = await loadManifestPods(paths, {namespace: selection.namespace})
  return {...selection, refs, workloads}
}
