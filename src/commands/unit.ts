/**
 * `podctl unit`: prints the systemd service that runs `podctl sync --watch` with the given flags
 * (local-kubelet/agent-unit.ts renders it). Nothing is installed and nothing is sent to the runtime,
 * except probing the well-known sockets when no endpoint is configured.
 */
import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {besideKubeletFlag, claimsRootFlag, podDirRootFlag, podLogsRootFlag} from '../lib/flags.js'
import {DEFAULT_CLAIMS_ROOT, DEFAULT_POD_DIR_ROOT, DEFAULT_POD_LOGS_ROOT} from '../lib/kube/helpers.js'
import {parseListenAddress} from '../lib/metrics/address.js'
import {metricsAddressFlag} from '../lib/metrics/flag.js'
import {absoluteManifests, type AgentUnit, agentUnit, STOP_SIGNAL, type WatchSelection} from '../lib/local-kubelet/agent-unit.js'
import {findRuntimeUnit} from '../lib/local-kubelet/runtime-unit.js'
import {checkWatchedPaths} from '../lib/kubelet/config/manifest-source.js'
import {validateSelection} from '../lib/node/select.js'
import {parseLabelSelector} from '../lib/util/filters.js'
import {UsageError} from '../lib/errors.js'

export default class Unit extends BaseCommand<typeof Unit> {
  static override summary = 'Print a systemd service that runs podctl sync --watch with these flags: podctl as the node agent.'

  static override description = `Takes the flags of \`sync --watch\` (what to supervise and where) and prints a unit \
file for /etc/systemd/system. ExecStart names everything absolutely, resolved now: the podctl program as it was \
invoked (the Node binary and bin/run.js, or the single executable), the -f manifests (a path that does not exist is \
refused), the pod roots and the runtime endpoint podctl resolves (--runtime-endpoint, CONTAINER_RUNTIME_ENDPOINT, the \
crictl config, else the socket that answers). The service starts after, and wants, network-online.target and the \
unit that runs the runtime: the systemd service of the process listening on the socket, or the .socket unit whose \
ListenStream= is its path; when there is none (a runtime started outside systemd), it is left out and stderr says so. \
--after names it instead. A manifest directory sync --watch would refuse (writable by others, another user's) is \
refused now. Restart=always every 10s without a start limit, as the kubelet's unit; exit 2 (a usage error) is \
not restarted.

Stopping the service leaves the pods running, as stopping the kubelet does: systemd sends ${STOP_SIGNAL} to podctl \
alone (KillMode=mixed); sync --watch takes it as Ctrl-C, lets every pod worker finish its step in flight, releases \
the pods' supervisor locks and exits 0. The containers are the runtime's processes, not the unit's. To remove pods, \
\`podctl kill\` them (or, with -f, remove their manifest).

Install: podctl unit -f DIR > /etc/systemd/system/podctl.service && systemctl daemon-reload && systemctl enable --now podctl`

  static override examples = [
    example('The node agent for a manifest directory', '-f /etc/podctl/manifests'),
    example(
      'Install and start it',
      '-f /etc/podctl/manifests > /etc/systemd/system/podctl.service && systemctl daemon-reload && systemctl enable --now podctl',
    ),
    example('Supervise every pod podctl made in one namespace', '--all -n edge'),
    example('The agent with Prometheus metrics on loopback', '-f /etc/podctl/manifests --metrics-address 127.0.0.1:9100'),
    example(
      'A second agent with its own name, after a runtime started by another unit',
      '--name podctl-ci --all -n ci --after k3s.service',
    ),
  ]

  static override usage = '<%= command.id %> -f FILE|DIR... | --all | -l KEY=VALUE | POD... [-n NAMESPACE] [--name NAME] [--after UNIT]'

  static override strict = false

  static override args = {
    pod: Args.string({description: 'Pod name (in --namespace), name_namespace, or sandbox ID prefix; several may be given.'}),
  }

  static override flags = {
    name: Flags.string({summary: "The unit's name (NAME.service), in its header and Description.", default: 'podctl', helpValue: 'NAME'}),
    after: Flags.string({
      summary: "A unit to start after and want instead of the runtime's service (repeatable).",
      multiple: true,
      helpValue: 'UNIT',
    }),
    filename: Flags.string({
      char: 'f',
      summary: 'Manifest file or directory whose pods sync --watch runs and keeps as it changes (repeatable).',
      multiple: true,
      helpValue: 'FILE|DIR',
    }),
    namespace: Flags.string({char: 'n', summary: 'Namespace of the named pods; with --all or --label, only pods of this namespace.'}),
    label: Flags.string({char: 'l', summary: 'Supervise pods with this label KEY=VALUE (repeatable; all must match).', multiple: true}),
    all: Flags.boolean({summary: 'Supervise every pod podctl made (restricted by --namespace when given).'}),
    parallel: Flags.integer({summary: 'Image pulls in flight at once (sync --watch --parallel).', min: 1, helpValue: 'N'}),
    'pod-logs-root': podLogsRootFlag,
    'pod-dir-root': podDirRootFlag,
    'claims-root': claimsRootFlag,
    'metrics-address': metricsAddressFlag,
    quiet: Flags.boolean({char: 'q', summary: 'No event timeline in the journal; only failures.'}),
    force: besideKubeletFlag,
  }

  public async run(): Promise<AgentUnit> {
    const {flags} = this
    const manifests = flags.filename ?? []
    const labels = flags.label ?? []
    const selects = this.positional.length > 0 || flags.all || labels.length > 0
    if (!selects && manifests.length === 0)
      throw new UsageError('nothing to supervise; give -f FILE|DIR, --all, --label KEY=VALUE or POD names')

    // The mixes sync refuses (POD names with --all, ...) are refused now, not in the journal at boot.
    if (selects) validateSelection({refs: this.positional, namespace: flags.namespace, labels: parseLabelSelector(labels), all: flags.all})
    // What sync --watch would refuse at every start (exit 2, never restarted) is refused now, by its own check.
    await checkWatchedPaths(absoluteManifests(manifests, process.cwd()))
    // The endpoint podctl resolves; the sockets are probed only when nothing names one.
    const client = await this.client()
    const runtime = flags.after ? undefined : findRuntimeUnit(client.runtimeEndpoint)
    const unit = agentUnit({
      name: flags.name,
      execPath: process.execPath,
      script: process.argv[1],
      cwd: process.cwd(),
      endpoint: client.runtimeEndpoint,
      imageEndpoint: client.imageEndpoint,
      after: flags.after ?? [],
      runtimeUnit: runtime?.unit,
      watch: this.watchSelection(manifests, labels),
    })
    if (runtime && runtime.unit === undefined)
      this.stderrLine(
        `No Wants=/After= for the runtime at ${client.runtimeEndpoint}: ${runtime.why}; name its unit with --after UNIT if it has one`,
      )
    if (!this.jsonEnabled()) process.stdout.write(unit.unit)
    return unit
  }

  /** The flags sync --watch gets, as given (agentUnit makes the paths absolute). */
  private watchSelection(manifests: string[], labels: string[]): WatchSelection {
    const {flags} = this
    return {
      pods: this.positional,
      manifests,
      namespace: flags.namespace,
      labels,
      all: flags.all,
      parallel: flags.parallel,
      podLogsRoot: flags['pod-logs-root'] === DEFAULT_POD_LOGS_ROOT ? undefined : flags['pod-logs-root'],
      podDirRoot: flags['pod-dir-root'] === DEFAULT_POD_DIR_ROOT ? undefined : flags['pod-dir-root'],
      claimsRoot: flags['claims-root'] === DEFAULT_CLAIMS_ROOT ? undefined : flags['claims-root'],
      // A bad address is refused now, not in the journal at boot.
      metricsAddress: flags['metrics-address'] === undefined ? undefined : checkedAddress(flags['metrics-address']),
      quiet: flags.quiet,
      force: flags.force,
    }
  }
}

function checkedAddress(address: string): string {
  parseListenAddress(address)
  return address
}
