/**
 * `podctl checkpoint`: running containers checkpointed into a tar archive (CRI CheckpointContainer,
 * the kubelet's forensic checkpoint), one after the other; each ID printed once it is written.
 */
import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {outputFlag} from '../lib/flags.js'
import {checkpointContainers, checkpointLocation} from '../lib/node/checkpoint.js'
import {resolveContainers} from '../lib/node/resolve-containers.js'

export interface CheckpointResult {
  /** The absolute path given to the runtime. */
  location: string
  items: Array<{containerId: string}>
  failures: Array<{container: string; code: string; exitCode: number; message: string}>
}

export default class Checkpoint extends BaseCommand<typeof Checkpoint> {
  static override summary = 'Checkpoint running containers into a tar archive (CRI CheckpointContainer).'

  static override description = `CheckpointContainer for each container: the runtime freezes it with CRIU and writes \
its state to the --export archive (the path is made absolute first; the runtime would read a relative one against its \
own directory). The container keeps running. Each ID is printed once its checkpoint is written; every failure is \
reported and the exit code is that of the first. --export names one archive, so podctl checkpoints one container per \
call (crictl lets a second overwrite the first).

The runtime must support it: CRI-O 1.25+ with enable_criu_support, containerd 1.7+ with CRIU installed. containerd 1.6 \
answers UNIMPLEMENTED: podctl says so in one line and exits 6 (Unimplemented). Each call may take up to 2 minutes \
(the kubelet's runtime request timeout); a --timeout bounds the whole command.`

  static override examples = [
    example('Checkpoint a container by ID prefix', '4f2a9c --export=/var/lib/checkpoints/web.tar'),
    example('Container "app" of pod web in namespace shop', '-n shop web/app -e /tmp/web-app.tar'),
  ]

  static override strict = false

  static override flags = {
    export: Flags.string({
      char: 'e',
      summary: 'The tar archive to write the checkpoint to, e.g. /path/to/checkpoint.tar (required).',
      helpValue: 'FILE',
    }),
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pods named in POD/CONTAINER (default "default").'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  static override usage = '<%= command.id %> CONTAINER... --export FILE [-n NAMESPACE]'

  public async run(): Promise<CheckpointResult> {
    const refs = this.positional
    if (refs.length === 0) {
      throw new UsageError('checkpoint needs a CONTAINER (ID prefix or POD/CONTAINER); e.g. podctl checkpoint 4f2a9c -e /tmp/web.tar')
    }

    const location = checkpointLocation(this.flags.export)
    const client = await this.client()
    const resolved = await this.resolve(refs)
    const ids = resolved.containers.map((container) => container.id)
    const onCheckpointed = (id: string) => this.machineOutput() || this.log(id)
    const outcome = await checkpointContainers(client, ids, location, {stopAtFailure: false, onCheckpointed})
    const items = outcome.checkpointed.map((containerId) => ({containerId}))
    const all = [...resolved.failures, ...outcome.failures]
    const result: CheckpointResult = {location, items, failures: all.map(({ref, error}) => ({container: ref, ...error.toJSON()}))}
    if (this.machineOutput()) await this.emit(result)
    this.reportFailures(all.map(({error}) => error))
    return result
  }

  private async resolve(refs: readonly string[]) {
    const resolved = await resolveContainers(await this.client(), {refs, namespace: this.flags.namespace})
    if (resolved.containers.length > 1) {
      throw new UsageError(
        `--export names one archive, and ${resolved.containers.length} containers would overwrite it; checkpoint one container per call`,
      )
    }

    return resolved
  }
}
