import {Args, Flags} from '@oclif/core'

import {BaseCommand, example, toPodctlError} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {outputFlag} from '../lib/flags.js'
import {type InspectKind, inspectObjects} from '../lib/node/inspect.js'
import {statusTable} from '../lib/output/status-table.js'

export type InspectResult = Record<string, unknown> | Array<Record<string, unknown>>

const KIND_WORDS: Record<string, InspectKind> = {
  container: 'container',
  containers: 'container',
  pod: 'pod',
  pods: 'pod',
  image: 'image',
  images: 'image',
}

export default class Inspect extends BaseCommand<typeof Inspect> {
  static override summary = 'Show the full runtime status of containers, pods or images.'

  static override description = `Calls ContainerStatus, PodSandboxStatus or ImageStatus with verbose=true and prints \
{"status": {...}, <info keys>...}: the CRI status with every "...At" timestamp as RFC 3339 (null when never set), and \
the runtime's verbose info merged in as JSON (containerd's "info" holds the OCI spec, pid, snapshotter...). One \
reference prints one object; several print a list, in the order given.

References: a container is an ID prefix or POD/CONTAINER; a pod is its name (in --namespace, default "default"), \
name_namespace or a sandbox ID prefix (the newest attempt is shown); an image is a tag, repo@digest or image ID \
prefix. Without a kind, podctl tries container, pod and image, and refuses (exit 15) a reference that matches more \
than one, listing them. --template takes Go-template field paths ({{.status.id}}, {{index .status.labels "k"}}, \
{{.info | json}}); -o jsonpath= takes kubectl JSONPath; both print one line per object and fail on a missing key. \
-q asks without verbose (the status only, no "info"); -o table prints crictl's Key: value blocks. crictl's inspectp \
and inspecti are "inspect pod" and "inspect image".`

  static override examples = [
    example('A container by ID prefix', '4f2a9c'),
    example('A container by pod and name', 'container web/nginx -n shop'),
    example('Two pods, as a YAML list', 'pod web_shop db_shop -o yaml'),
    example('The state of a container', `web/nginx -n shop -o jsonpath='{.status.state}'`),
    example('The PID of a container (containerd)', `4f2a9c --template '{{.info.pid}}'`),
    example('A pod, as crictl inspectp -o table prints it', 'pod web -n shop -o table'),
    example('Is an image pinned?', `image registry.k8s.io/pause:3.9 --template '{{.status.pinned}}'`),
  ]

  static override strict = false

  static override args = {
    ref: Args.string({
      required: true,
      description: 'Optional kind (container|pod|image), then one or more IDs or names.',
    }),
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace for pod names and POD/CONTAINER references (default "default").'}),
    output: outputFlag(['json', 'yaml', 'table'], {templates: true}),
    quiet: Flags.boolean({char: 'q', summary: "The CRI status only, without the runtime's verbose info."}),
    template: Flags.string({summary: 'Go-template field paths to print, e.g. {{.status.id}} (like crictl -o go-template).'}),
  }

  public async run(): Promise<InspectResult> {
    const {flags, positional: words} = this
    const kind = KIND_WORDS[words[0]]
    const refs = kind ? words.slice(1) : words
    if (refs.length === 0) {
      throw new UsageError(`inspect ${words[0]} needs at least one ID or name, e.g. podctl inspect ${words[0]} <ID>`)
    }

    const outcome = await inspectObjects(await this.client(), refs, kind, {namespace: flags.namespace, verbose: !flags.quiet})
    const failures = outcome.failures.map((failure) => toPodctlError(failure.error))
    // One reference: its failure is the command's failure (and --json prints it as the error).
    if (refs.length === 1 && failures.length === 1) throw failures[0]
    const result: InspectResult = refs.length === 1 && outcome.documents.length === 1 ? outcome.documents[0] : outcome.documents
    await this.emit(result, () => statusTable(outcome.documents), {each: outcome.documents})
    // Several references: print what was found, then every failure; the first one sets the exit code.
    this.reportFailures(failures)
    return result
  }
}
