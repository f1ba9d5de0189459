/**
 * `podctl update`: CPU and memory of created or running containers changed in place
 * (kubelet/update-resources.ts), with crictl's flags and units or Kubernetes quantities.
 */
import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {forEachContainer} from '../lib/kubelet/kuberuntime/container-ops.js'
import {resourceChanges, updateContainerResources, type UpdatedResult} from '../lib/kubelet/kuberuntime/update-resources.js'
import {resolveContainers} from '../lib/node/resolve-containers.js'

export interface UpdateResult {
  items: UpdatedResult[]
  failures: Array<{container: string; code: string; exitCode: number; message: string}>
}

export default class Update extends BaseCommand<typeof Update> {
  static override summary = 'Change the CPU and memory limits of running containers (UpdateContainerResources).'

  static override description = `Takes crictl update's flags and units (--cpu-period and --cpu-quota in microseconds, \
--cpu-shares, --cpuset-cpus, --cpuset-mems, --memory in bytes) and Kubernetes quantities: --cpus 0.5 (a CFS quota over \
the period, default 100ms) and --memory 256Mi. Settings not given keep the values the runtime reports for the container. \
The change is made to the container's cgroup at once; it is not recorded in the kubelet's annotations, so a container \
made again from its manifest gets the manifest's limits. Each ID is printed once updated.`

  static override examples = [
    example('Half a CPU and 256 MiB for a container', '4f2a9c --cpus 0.5 --memory 256Mi'),
    example("crictl's units", '-n shop web/app --cpu-period 100000 --cpu-quota 50000 --memory 268435456'),
    example('Pin to CPUs 0 and 1', '4f2a9c --cpuset-cpus 0-1'),
  ]

  static override strict = false

  static override flags = {
    cpus: Flags.string({summary: 'CPU limit as a quantity (0.5, 2, 500m): sets --cpu-quota over --cpu-period.', helpValue: 'CPUS'}),
    memory: Flags.string({summary: 'Memory limit: bytes (268435456) or a quantity (256Mi, 1Gi).', helpValue: 'SIZE'}),
    'cpu-period': Flags.string({summary: 'CPU CFS period in microseconds.', helpValue: 'US'}),
    'cpu-quota': Flags.string({summary: 'CPU CFS quota in microseconds (-1: none).', helpValue: 'US'}),
    'cpu-shares': Flags.string({aliases: ['cpu-share'], summary: 'CPU shares (relative weight).', helpValue: 'SHARES'}),
    'cpuset-cpus': Flags.string({summary: 'CPUs the container may use, e.g. 0-3 or 0,2.', helpValue: 'LIST'}),
    'cpuset-mems': Flags.string({summary: 'Memory nodes the container may use, e.g. 0-1.', helpValue: 'LIST'}),
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pods named in POD/CONTAINER (default "default").'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  static override usage = '<%= command.id %> CONTAINER... [--cpus N] [--memory SIZE] [--cpu-period US] [--cpu-quota US] [--cpu-shares N]'

  public async run(): Promise<UpdateResult> {
    const {flags} = this
    const changes = resourceChanges({
      cpus: flags.cpus,
      memory: flags.memory,
      cpuPeriod: flags['cpu-period'],
      cpuQuota: flags['cpu-quota'],
      cpuShares: flags['cpu-shares'],
      cpusetCpus: flags['cpuset-cpus'],
      cpusetMems: flags['cpuset-mems'],
    })
    const client = await this.client()
    const {containers, failures} = await resolveContainers(client, {refs: this.positional, namespace: flags.namespace})
    const outcome = await forEachContainer(containers, 4, async (container) => {
      const updated = await updateContainerResources(client, container, changes)
      if (!this.machineOutput()) this.log(updated.containerId)
      return updated
    })
    const all = [...failures, ...outcome.failures]
    const result: UpdateResult = {items: outcome.items, failures: all.map(({ref, error}) => ({container: ref, ...error.toJSON()}))}
    if (this.machineOutput()) await this.emit(result)
    this.reportFailures(all.map(({error}) => error))
    return result
  }
}
