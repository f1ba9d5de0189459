/**
 * `podctl runp`: a pod sandbox with no containers, from a Pod manifest or crictl's pod config
 * (manifest/granular.ts), made the kubelet's way (kubelet/run-sandbox.ts); prints its ID.
 */
import {readFile} from 'node:fs/promises'

import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {besideKubeletFlag, outputFlag, podDirRootFlag, podLogsRootFlag} from '../lib/flags.js'
import {KUBELET_WAY, refuseBesideKubelet} from '../lib/local-kubelet/runtime-owner.js'
import {discardEvents} from '../lib/kube/events.js'
import type {SandboxRunResult} from '../lib/kubelet/run/run-sandbox.js'

export default class Runp extends BaseCommand<typeof Runp> {
  static override summary = 'Start a pod sandbox with no containers, from a Pod manifest or a crictl pod config; prints its ID.'

  static override description = `crictl's runp, the kubelet's way: the pod's volumes, RunPodSandbox with the kubelet's labels \
(io.kubernetes.pod.*) and podctl's annotations, the log directory and the managed /etc/hosts, exactly as podctl run makes \
them, but no containers: add them with podctl create, start them with podctl start. The input is one document: a v1 Pod \
manifest (its containers' ports and privileged flags shape the sandbox; the containers are not created) or crictl's pod \
sandbox config (snake_case fields, as crictl runp reads it). A document with kind or apiVersion is a Pod manifest.

A pod of the same name and namespace that already exists is refused (exit 8). A failure after RunPodSandbox rolls the \
sandbox back. The runtime handler is --runtime (crictl's runp -r; -r is podctl's --runtime-endpoint), else the \
manifest's runtimeClassName. Prints the sandbox ID on stdout; events go to stderr unless -q.

Beside a live kubelet that uses this runtime (it kills every pod it did not start within ~2 s) nothing is created \
and the exit code is 17 (KubeletOwnsRuntime), unless --force.`

  static override examples = [
    example('A sandbox from a Pod manifest, then a container into it', 'pod.yaml'),
    example('Beside a kubelet that is about to be stopped: create it anyway', 'pod.yaml --force'),
    example("crictl's pod config, with a runtime handler", 'pod-config.json --runtime runc'),
    {description: 'In a script', command: 'POD=$(<%= config.bin %> <%= command.id %> -q pod-config.yaml)'},
  ]

  static override args = {
    file: Args.string({description: 'Pod manifest or crictl pod config (YAML or JSON), or - for stdin; same as -f.', ignoreStdin: true}),
  }

  static override flags = {
    filename: Flags.string({char: 'f', summary: 'Pod manifest or crictl pod config (YAML or JSON), or - for stdin.', helpValue: 'FILE|-'}),
    'runtime-handler': Flags.string({
      aliases: ['runtime'],
      summary: 'Runtime handler for RunPodSandbox (crictl runp --runtime); default the manifest runtimeClassName.',
      helpValue: 'NAME',
    }),
    'pod-logs-root': podLogsRootFlag,
    'pod-dir-root': podDirRootFlag,
    quiet: Flags.boolean({char: 'q', summary: 'Only the sandbox ID: no events on stderr.'}),
    force: besideKubeletFlag,
    output: outputFlag(['table', 'json', 'yaml']),
  }

  public async run(): Promise<SandboxRunResult> {
    const {flags} = this
    const path = this.inputPath()
    const [{loadSandboxInput}, {runSandbox}] = await Promise.all([
      import('../lib/manifest/granular.js'),
      import('../lib/kubelet/run/run-sandbox.js'),
    ])
    const {pod, ports} = await loadSandboxInput(path)
    await refuseBesideKubelet(await this.client(), {force: flags.force, instead: KUBELET_WAY, warn: (line) => this.warnLine(line)})
    const interruption = this.interruptSignal({notice: 'Interrupted: rolling back'})
    const result = await runSandbox(await this.client(), pod, {
      logsRoot: flags['pod-logs-root'],
      podDirRoot: flags['pod-dir-root'],
      hostResolvConf: await readFile('/etc/resolv.conf', 'utf8').catch(() => ''),
      runtimeHandler: flags['runtime-handler'],
      ports,
      // crictl prints the ID alone: no events.
      events: flags.quiet ? discardEvents : this.printEvents({kind: 'warnings'}),
      signal: interruption.signal,
    }).finally(() => interruption.release())
    await this.emit(result, () => result.sandboxId)
    return result
  }

  private inputPath(): string {
    const {file} = this.args
    const {filename} = this.flags
    if (file !== undefined && filename !== undefined) throw new UsageError(`give the pod config once: either ${file} or -f ${filename}`)
    const path = file ?? filename
    if (path === undefined) throw new UsageError('no pod config: podctl runp POD-CONFIG (a Pod manifest or crictl pod config; - for stdin)')
    return path
  }
}
