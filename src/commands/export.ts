/**
 * `podctl export POD`: the pod back as a manifest that `podctl run` and `kubectl apply` take, from
 * its record (kubelet/config/export-pod.ts), else rebuilt from the runtime; what is missing goes to
 * stderr, the manifest to stdout.
 */
import {hostname} from 'node:os'

import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {outputFlag, podDirRootFlag} from '../lib/flags.js'
import {exportPod} from '../lib/kubelet/config/export-pod.js'
import {apiReferences} from '../lib/local-kubelet/static-pod-references.js'
import {EXPORT_FORMS, type ExportForm} from '../lib/manifest/export-forms.js'
import type {Json} from '../lib/manifest/fields.js'
import {resolvePodSandboxes} from '../lib/node/resolve.js'
import {toJson, toYaml} from '../lib/output/serialize.js'

export default class Export extends BaseCommand<typeof Export> {
  static override summary = 'Print a pod as a manifest that podctl run and kubectl apply take (as a Pod, Deployment or static pod).'

  static override description = `The source is the record podctl run (or sync -f) kept in the pod's directory: the pod \
as it was given, with the API server's defaults filled in, and the ConfigMaps it reads as documents before it. A pod \
without a record (made by the kubelet, crictl, runp/create) is rebuilt from the runtime: names, images, command, args, \
env, ports, mounts, termination message, grace period and preStop from the kubelet's labels and annotations and the \
runtime's verbose status, probes where podctl recorded them; stderr says what the runtime does not hold. Never in the \
output: status, uid, resourceVersion, creationTimestamp, runtime-only fields, podctl's own annotations, or a Secret's \
value (stderr names the Secrets and keys the pod needs; give them beside the manifest).

--as deployment wraps the pod in an apps/v1 Deployment of 1 replica whose selector is the pod's labels (app: NAME when \
it has none). --as static prints the Pod for a static pod directory: a pod the kubelet ran from such a file loses its \
-<node> suffix (--node-name, default this host's name), and no ConfigMap goes beside it (the kubelet refuses API \
references in a static pod; stderr lists them). -o json prints one object, or a v1 List when ConfigMaps come with it.`

  static override examples = [
    example('A pod as YAML', 'web -n shop'),
    example('Run it again elsewhere', 'web -n shop > web.yaml && podctl run -f web.yaml'),
    example('As a Deployment for a cluster', 'web -n shop --as deployment | kubectl apply -f -'),
    example('For a static pod directory', 'web -n shop --as static > /etc/kubernetes/manifests/web.yaml'),
  ]

  static override usage = '<%= command.id %> POD [-n NAMESPACE] [--as pod|deployment|static] [-o yaml|json]'

  static override args = {
    pod: Args.string({required: true, description: 'Pod name (in --namespace), name_namespace or sandbox ID prefix.'}),
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod name (default "default").'}),
    as: Flags.string({summary: 'The form: pod, deployment or static.', helpValue: 'pod|deployment|static', default: 'pod'}),
    output: outputFlag(['yaml', 'json']),
    'node-name': Flags.string({summary: 'The node name a static pod of the kubelet is suffixed with (default: the host name).'}),
    'pod-dir-root': podDirRootFlag,
  }

  public async run(): Promise<unknown> {
    const {flags, args} = this
    const form = flags.as as ExportForm
    if (!EXPORT_FORMS.includes(form)) throw new UsageError(`--as takes pod, deployment or static, not "${flags.as}"`)
    const client = await this.client()
    const sandboxes = await resolvePodSandboxes(client, args.pod, {namespace: flags.namespace})
    const nodeName = flags['node-name'] ?? hostname().trim().toLowerCase()
    const exported = await exportPod(client, sandboxes, {form, podDirRoot: flags['pod-dir-root'], nodeName})
    for (const note of exported.notes) this.stderrLine(`Note: ${note}`)
    if (form === 'static') for (const line of apiReferences(exported.pod as Json)) this.warnLine(line)
    const {documents} = exported
    const result = documents.length === 1 ? documents[0] : {apiVersion: 'v1', kind: 'List', items: documents}
    if (this.jsonEnabled()) return result
    if (this.output.kind === 'json') this.log(toJson(result))
    else this.log((await Promise.all(documents.map((document) => toYaml(document)))).join('\n---\n'))
    return result
  }
}
