/**
 * `podctl create`: one container into a running pod, from a Pod manifest's container or crictl's
 * container config (manifest/granular.ts), the kubelet's way (kubelet/add-container.ts); prints its ID.
 */
import {existsSync} from 'node:fs'
import {totalmem} from 'node:os'

import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {besideKubeletFlag, outputFlag, podDirRootFlag, podLogsRootFlag} from '../lib/flags.js'
import {refuseBesideKubelet} from '../lib/local-kubelet/runtime-owner.js'
import {discardEvents} from '../lib/kube/events.js'
import type {AddedContainer} from '../lib/kubelet/run/add-container.js'
import type {PullPolicy} from '../lib/manifest/model.js'
import {resolvePodSandboxes} from '../lib/node/resolve.js'

export default class Create extends BaseCommand<typeof Create> {
  static override summary = 'Add a container to a running pod (e.g. a debug container beside the app); prints its ID.'

  static override description = `The kubelet's startContainer for one more container of an existing pod: the pod's name, \
namespace, uid, namespaces and grace period are read from its sandbox, so the container gets the same io.kubernetes.* \
labels and annotations (hash, restart count, grace period, preStop hook) as one podctl run makes, its log file in the \
pod's log directory, the pod's /etc/hosts and volumes. The image is ensured first by its pull policy (--with-pull: \
Always, --no-pull: Never), then CreateContainer; with --start also StartContainer and the postStart hook. Without \
--start the container stays created: podctl start runs it (and its postStart hook).

The container is a container of a Pod manifest (-f pod.yaml, --container NAME when it has several; its volumes and \
terminationGracePeriodSeconds come along) or crictl's container config (crictl's form, unchanged: create POD \
CONTAINER-CONFIG POD-CONFIG; the pod config is checked but the sandbox's own config is what is sent). A container of \
the same name that is not exited is refused (exit 8; --name gives another); a failed start removes the container again.

Beside a live kubelet that uses this runtime (it kills every pod it did not start within ~2 s) nothing is created \
and the exit code is 17 (KubeletOwnsRuntime), unless --force.`

  static override examples = [
    example('A debug container from a manifest into pod web', 'web -f debug.yaml --container debug --start'),
    example('The same beside a kubelet that is about to be stopped', 'web -f debug.yaml --container debug --start --force'),
    example("crictl's form", '3f2a9c container-config.json pod-config.json'),
    {description: 'In a script', command: 'C=$(<%= config.bin %> <%= command.id %> -q -n shop web -f pod.yaml --container debug)'},
  ]

  static override strict = false

  static override usage = '<%= command.id %> POD (-f FILE [--container NAME] | CONTAINER-CONFIG [POD-CONFIG]) [-n NAMESPACE] [--start]'

  static override args = {
    pod: Args.string({description: 'Pod name (in --namespace), name_namespace, or sandbox ID prefix.'}),
    'container-config': Args.string({description: 'crictl container config or Pod manifest (same as -f).'}),
    'pod-config': Args.string({description: "crictl's pod config (checked, not needed: the sandbox's own config is used)."}),
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod (default "default").'}),
    filename: Flags.string({char: 'f', summary: 'Pod manifest (or crictl container config) holding the container.', helpValue: 'FILE|-'}),
    container: Flags.string({summary: 'Which container of the manifest (needed when it has several).', helpValue: 'NAME'}),
    name: Flags.string({summary: "The new container's name, instead of the input's.", helpValue: 'NAME'}),
    start: Flags.boolean({summary: 'Also start it (and run its postStart hook).'}),
    'with-pull': Flags.boolean({summary: 'Pull the image even when present (pull policy Always).', exclusive: ['no-pull']}),
    'no-pull': Flags.boolean({summary: 'Never pull; the image must be present (pull policy Never).'}),
    creds: Flags.string({summary: 'Registry credentials USER[:PASSWORD] for the pull.', helpValue: 'USER[:PASSWORD]'}),
    auth: Flags.string({summary: 'Registry credentials as base64 of USER:PASSWORD.', helpValue: 'BASE64'}),
    'pod-logs-root': podLogsRootFlag,
    'pod-dir-root': podDirRootFlag,
    quiet: Flags.boolean({char: 'q', summary: 'Only the container ID: no events on stderr.'}),
    force: besideKubeletFlag,
    output: outputFlag(['table', 'json', 'yaml']),
  }

  protected override credentialFollower = {
    accepts: (token: string) => token === '-' || existsSync(token),
    description: 'an existing config file',
  }

  public async run(): Promise<AddedContainer> {
    const {flags} = this
    const [ref, containerPath, podConfig] = this.inputs()
    const [{loadContainerInput, loadSandboxInput}, {addContainer}, {ImageManager}, {credentialsFromFlags}] = await Promise.all([
      import('../lib/manifest/granular.js'),
      import('../lib/kubelet/run/add-container.js'),
      import('../lib/images/image-manager.js'),
      import('../lib/images/credentials.js'),
    ])
    const input = await loadContainerInput(containerPath, flags.container)
    const named = podConfig === undefined ? undefined : (await loadSandboxInput(podConfig)).pod
    const credential = await credentialsFromFlags({creds: flags.creds, auth: flags.auth})
    const instead = 'add the container to the pod in its static manifest (podctl run --static)'
    await refuseBesideKubelet(await this.client(), {force: flags.force, instead, warn: (line) => this.warnLine(line)})
    const client = await this.client()
    const [sandbox] = await resolvePodSandboxes(client, ref, {namespace: flags.namespace})
    if (named && `${named.name}_${named.namespace}` !== `${sandbox.metadata?.name}_${sandbox.metadata?.namespace}`) {
      this.warnLine(`${podConfig} names pod ${named.name}_${named.namespace}, not the sandbox's; the sandbox's own config is used`)
    }

    // crictl prints the ID alone: no events.
    const events = flags.quiet ? discardEvents : this.printEvents({kind: 'compact'})
    const interruption = this.interruptSignal({notice: 'Interrupted: removing what was created'})
    const result = await addContainer(client, sandbox, input, {
      logsRoot: flags['pod-logs-root'],
      podDirRoot: flags['pod-dir-root'],
      nodeMemoryBytes: totalmem(),
      images: new ImageManager(client, events, {recordPullsIn: flags['pod-dir-root']}),
      pullPolicy: this.pullPolicy(),
      auth: credential?.auth,
      authSource: credential?.source,
      start: flags.start,
      name: flags.name,
      events,
      signal: interruption.signal,
    }).finally(() => interruption.release())
    await this.emit(result, () => result.containerId)
    return result
  }

  /** POD and the container input, in crictl's positional form or podctl's -f form. */
  private inputs(): [string, string, string | undefined] {
    const [ref, containerConfig, podConfig, ...rest] = this.positional
    if (rest.length > 0)
      throw new UsageError(`too many arguments (${rest.join(' ')}); usage: podctl create POD CONTAINER-CONFIG [POD-CONFIG]`)
    if (ref === undefined)
      throw new UsageError('no pod given; usage: podctl create POD -f pod.yaml [--container NAME], or POD CONTAINER-CONFIG POD-CONFIG')
    const {filename} = this.flags
    if (containerConfig !== undefined && filename !== undefined) {
      throw new UsageError(`give the container once: either ${containerConfig} or -f ${filename}`)
    }

    const path = containerConfig ?? filename
    if (path === undefined) throw new UsageError('no container given; pass -f pod.yaml [--container NAME], or a crictl container config')
    return [ref, path, podConfig]
  }

  private pullPolicy(): PullPolicy | undefined {
    if (this.flags['with-pull']) return 'Always'
    return this.flags['no-pull'] ? 'Never' : undefined
  }
}
