/**
 * `podctl resize`: new cpu and memory requests and limits for a container of a running pod, in
 * place (kubelet/kuberuntime/resize.ts), as `kubectl patch pod --subresource resize` asks the kubelet.
 */
import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {outputFlag} from '../lib/flags.js'
import {type ResizeOutcome, resizePod} from '../lib/kubelet/kuberuntime/resize.js'
import type {ResourceListModel} from '../lib/manifest/model.js'

const ACTIONS: Record<ResizeOutcome['action'], string> = {
  updated: 'changed in place',
  restarting: 'stopped to restart with them (resizePolicy RestartContainer); it starts again at the pod’s next sync',
  recorded: 'recorded; the container is not running, and starts with them',
}

export default class Resize extends BaseCommand<typeof Resize> {
  static override summary = "Change a running pod's container cpu and memory in place, as Kubernetes' in-place resize."

  static override description = `The resize of Kubernetes 1.35 (kubectl patch pod NAME --subresource resize), for a pod \
podctl runs: --requests and --limits give new cpu and memory quantities for one container (--container, or the pod's only \
app container); what is not given stays. As the API server, a resize may not change the pod's QoS class (exit 2), nor \
apply to an init container that runs to completion (sidecars can be resized). As the kubelet, a resource whose \
container resizePolicy is NotRequired (the default) is changed in the running container's cgroup \
(UpdateContainerResources); with RestartContainer the container is stopped and starts again with the new resources at \
the pod's next sync (its supervisor, or podctl sync). The new resources are recorded beside the pod, so every later start \
of the container uses them; its spec (and hash) stays as it was run, so the change never recreates the container. A \
runtime that cannot change a running container's resources is named (exit 6).`

  static override examples = [
    example('More CPU for the only container of pod web', 'web --requests cpu=500m --limits cpu=1'),
    example('Memory of one container, in a namespace', 'web -n shop --container app --requests memory=256Mi --limits memory=512Mi'),
    example('What was changed, for a script', 'web --limits cpu=2 -o json'),
  ]

  static override args = {
    pod: Args.string({description: 'The pod: its name (in --namespace) or name_namespace.', required: true}),
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod (default "default").'}),
    container: Flags.string({summary: 'The container to resize (default: the pod’s only app container).'}),
    requests: Flags.string({summary: 'New requests, e.g. cpu=500m,memory=256Mi.', helpValue: 'cpu=Q,memory=Q'}),
    limits: Flags.string({summary: 'New limits, e.g. cpu=1,memory=512Mi.', helpValue: 'cpu=Q,memory=Q'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  public async run(): Promise<ResizeOutcome> {
    const {flags} = this
    const [name, inName] = this.args.pod.split('_')
    const requests = resourceFlag('--requests', flags.requests)
    const limits = resourceFlag('--limits', flags.limits)
    if (Object.keys(requests).length + Object.keys(limits).length === 0)
      throw new UsageError('nothing to resize; give --requests or --limits')
    const namespace = inName ?? flags.namespace ?? 'default'
    const outcome = await resizePod(await this.client(), {name, namespace, container: flags.container, requests, limits})
    await this.emit(
      outcome,
      () => `${outcome.pod}/${outcome.container}: ${describe(outcome.before)} -> ${describe(outcome.after)}: ${ACTIONS[outcome.action]}`,
    )
    return outcome
  }
}

/** "cpu=500m,memory=256Mi" → {cpu, memory}; other names are refused (cpu and memory resize in place). */
function resourceFlag(flag: string, value: string | undefined): ResourceListModel {
  const out: ResourceListModel = {}
  for (const item of (value ?? '').split(',').filter(Boolean)) {
    const [key, quantity] = item.split('=')
    if ((key !== 'cpu' && key !== 'memory') || !quantity) throw new UsageError(`${flag} "${item}": give cpu=QUANTITY or memory=QUANTITY`)
    out[key] = quantity
  }

  return out
}

function describe(resources: ResizeOutcome['before']): string {
  const one = (key: 'cpu' | 'memory') => `${key} ${resources.requests[key] ?? '-'}/${resources.limits[key] ?? '-'}`
  return `${one('cpu')}, ${one('memory')}`
}
