/**
 * `podctl start`: created containers started (kubelet/container-ops.ts), each with the postStart
 * hook `podctl create` recorded; one ID per line as crictl prints them.
 */
import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {besideKubeletFlag, outputFlag} from '../lib/flags.js'
import {KUBELET_WAY, refuseBesideKubelet} from '../lib/local-kubelet/runtime-owner.js'
import {discardEvents} from '../lib/kube/events.js'
import {forEachContainer, startCreatedContainer, type StartedResult} from '../lib/kubelet/kuberuntime/container-ops.js'
import {resolveContainers} from '../lib/node/resolve-containers.js'

export interface StartResult {
  items: StartedResult[]
  failures: Array<{container: string; code: string; exitCode: number; message: string}>
}

export default class Start extends BaseCommand<typeof Start> {
  static override summary = 'Start created containers (podctl create, crictl create), with their postStart hooks.'

  static override description = `StartContainer for each container, then the postStart exec hook podctl create recorded \
for it (a container from a manifest with lifecycle.postStart). As the kubelet does, a container whose postStart hook fails \
is killed, and the failure is PostStartHookError (exit 14). Only created containers can be started: an exited container is \
not restarted (create a new one). Each container's ID is printed once it started; every failure is reported, and the exit \
code is that of the first.

Beside a live kubelet that uses this runtime (it kills every pod it did not start within ~2 s) nothing is started \
and the exit code is 17 (KubeletOwnsRuntime), unless --force.`

  static override examples = [
    example('Start a container by ID prefix', '4f2a9c'),
    example('Start container "debug" of pod web in namespace shop', '-n shop web/debug'),
    example('Beside a kubelet that is about to be stopped: start it anyway', '4f2a9c --force'),
  ]

  static override strict = false

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pods named in POD/CONTAINER (default "default").'}),
    quiet: Flags.boolean({char: 'q', summary: 'Only the IDs: no events on stderr.'}),
    force: besideKubeletFlag,
    output: outputFlag(['table', 'json', 'yaml']),
  }

  static override usage = '<%= command.id %> CONTAINER... [-n NAMESPACE]'

  public async run(): Promise<StartResult> {
    await refuseBesideKubelet(await this.client(), {force: this.flags.force, instead: KUBELET_WAY, warn: (line) => this.warnLine(line)})
    const client = await this.client()
    const {containers, failures} = await resolveContainers(client, {refs: this.positional, namespace: this.flags.namespace})
    const events = this.flags.quiet ? discardEvents : this.printEvents({kind: 'compact'})
    const outcome = await forEachContainer(containers, 1, async (container) => {
      const started = await startCreatedContainer(client, container, {events})
      if (!this.machineOutput()) this.log(started.containerId)
      return started
    })
    const all = [...failures, ...outcome.failures]
    const result: StartResult = {items: outcome.items, failures: all.map(({ref, error}) => ({container: ref, ...error.toJSON()}))}
    if (this.machineOutput()) await this.emit(result)
    this.reportFailures(all.map(({error}) => error))
    return result
  }
}
