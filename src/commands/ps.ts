import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag, stateFlag} from '../lib/flags.js'
import {parseLabelSelector} from '../lib/util/filters.js'
import {renderTableBytes} from '../lib/output/table.js'
import {containerTable, type ContainerTableOptions, entryRows} from '../lib/node/container-table.js'
import {renderSpanTable} from '../lib/output/span-table.js'
import {humanDuration} from '../lib/output/format.js'
import {
  CONTAINER_STATES,
  type ContainerListEntry,
  type ContainerListFilters,
  containerRefName,
  containersNameHint,
  type ContainerStateName,
  listContainers,
} from '../lib/node/containers.js'
import type {Container} from '../generated/runtime/v1/api.js'
import {containerBlock} from '../lib/output/verbose-blocks.js'

export interface PsResult {
  containers: Container[]
}

export default class Ps extends BaseCommand<typeof Ps> {
  static override summary = 'List containers, newest first (running only unless -a).'

  static override description = `One ListContainers call (plus one ListImages for the table, and one ListPodSandbox for --pod or \
for containers whose labels do not name their pod), whatever the number of containers; -o wide adds one \
ContainerStatus per exited container, for its exit code. State \
and labels are filtered by the runtime; --name, --namespace and --image are exact unless they contain "*" (so \
--name web never matches web2). --latest and --last look at every state, like docker. IMAGE is the image as it was \
asked for, else a tag of the image (the kubelet creates containers by image ID), else the ID, shortened unless \
--no-trunc; --image matches any of these. Every filter applies the same way to every output format. JSON and YAML \
carry the CRI Container objects ({"containers": [...]}, camelCase keys, int64 as strings); -o name prints \
name_namespace/container, which other commands accept as a container reference.`

  static override examples = [
    example('Running containers'),
    example('Every container of one pod, with exit codes', '-a --pod web -n shop -o wide'),
    example('Containers that exited, as JSON', '--state exited -o json'),
    example("crictl's spelling of a state filter", '-s Running'),
    example('IDs of containers named "app" in any kube-* namespace', `-a --name app -n 'kube-*' -q`),
    example('Containers running a busybox image', `--image '*busybox*'`),
    example('The container created last, whatever its state', '--latest'),
    example("crictl's verbose blocks for one pod's containers", '-a --pod web -n shop -v'),
  ]

  static override flags = {
    all: Flags.boolean({char: 'a', summary: 'Show containers in every state (default: running only).'}),
    state: stateFlag(CONTAINER_STATES, 'Only containers in this state, in any case (filtered by the runtime).'),
    name: Flags.string({summary: 'Container name, exact or with * globs.'}),
    pod: Flags.string({
      char: 'p',
      summary: 'Pod name (in --namespace, default "default"), name_namespace, or pod sandbox ID prefix.',
    }),
    namespace: Flags.string({char: 'n', summary: 'Pod namespace, exact or with * globs.'}),
    label: Flags.string({char: 'l', summary: 'Container label selector KEY=VALUE (repeatable; all must match).', multiple: true}),
    image: Flags.string({summary: 'Image as given at creation, or image ref, exact or with * globs.'}),
    id: Flags.string({summary: 'Container ID prefix.'}),
    latest: Flags.boolean({summary: 'Only the most recently created container (any state unless --state).', exclusive: ['last']}),
    last: Flags.integer({summary: 'Only the N most recently created containers (any state unless --state).', min: 1}),
    quiet: Flags.boolean({char: 'q', summary: 'Print full container IDs only, one per line.'}),
    verbose: Flags.boolean({
      char: 'v',
      summary: 'One block per container (IDs, name, attempt, state, image, age, labels, annotations), as crictl ps -v.',
    }),
    'no-trunc': Flags.boolean({summary: 'Show full IDs and image digests.'}),
    output: outputFlag(['table', 'wide', 'json', 'yaml', 'name'], {templates: true}),
    'resolve-image-path': Flags.boolean({
      char: 'r',
      summary: "Show the image's tag instead of its ID (crictl's ps -r; podctl's table does so anyway).",
    }),
    // -r here is --resolve-image-path, as in crictl; the endpoint is --runtime-endpoint, or -r before the command.
    'runtime-endpoint': {...BaseCommand.baseFlags['runtime-endpoint'], char: undefined},
  }

  public async run(): Promise<PsResult> {
    const {flags} = this
    const wide = this.output.kind === 'wide' && !flags.quiet && !this.jsonEnabled()
    const filters = this.filters()
    const fast = this.drawsTableFromBytes() ? await this.tableFromBytes(filters) : undefined
    if (fast && 'result' in fast) return fast.result
    const entries = fast?.entries ?? (await listContainers(await this.client(), filters, this.listOptions(wide)))
    const result: PsResult = {containers: entries.map((entry) => entry.container)}

    if (flags.quiet) {
      if (!this.jsonEnabled()) for (const entry of entries) this.log(entry.container.id)
      return result
    }

    await this.emit(result, () =>
      flags.verbose
        ? verboseBlocks(entries)
        : this.output.kind === 'name'
          ? entries.map(containerRefName).join('\n')
          : this.table(entries, wide, flags['no-trunc']),
    )
    if (entries.length === 0) await this.hintExactNames()
    return result
  }

  private filters(): ContainerListFilters {
    const {flags} = this
    const state = flags.state as ContainerStateName | undefined
    const {all, name, pod, namespace, image, id, latest, last} = flags
    return {all, state, labels: parseLabelSelector(flags.label), name, pod, namespace, image, id, latest, last}
  }

  /** The plain table (not wide, -q, -v or a format): drawn from ListContainers' bytes (node/container-table.ts). */
  private drawsTableFromBytes(): boolean {
    const {flags} = this
    return this.output.kind === 'table' && !this.jsonEnabled() && !flags.quiet && !flags.verbose
  }

  /** The table written, with the run's result; or the entries to draw it from when it cannot be drawn from bytes. */
  private async tableFromBytes(filters: ContainerListFilters): Promise<{result: PsResult} | {entries: ContainerListEntry[]}> {
    const drawn = await containerTable(await this.client(), filters, this.tableOptions(), renderSpanTable)
    if (!drawn.table) return {entries: drawn.entries}
    // The objects are decoded only if the caller reads them (a table's run never does).
    const result = {} as PsResult
    Object.defineProperty(result, 'containers', {enumerable: true, get: drawn.containers})
    await this.emit(result, () => drawn.table)
    if (drawn.count === 0) await this.hintExactNames()
    return {result}
  }

  private tableOptions(): ContainerTableOptions {
    const paintState = (state: string) => this.paintState(state)
    return {noTrunc: this.flags['no-trunc'], paintState, nowMs: Date.now(), age: (ms) => `${humanDuration(ms)} ago`}
  }

  private paintState(state: string): string {
    const {chalk} = this
    return state === 'Running' ? chalk.green(state) : state === 'Exited' ? chalk.dim(state) : chalk.yellow(state)
  }

  /** Exit codes for -o wide, image names for the table and -r; summaries for rows, which never show annotations. */
  private listOptions(wide: boolean): {withExitCodes: boolean; withImageNames: boolean; summaries: boolean} {
    const {flags} = this
    const {kind} = this.output
    return {
      withExitCodes: wide,
      withImageNames: flags['resolve-image-path'] || (!flags.quiet && (kind === 'table' || wide)),
      summaries: !this.jsonEnabled() && !flags.verbose && (flags.quiet || kind === 'table' || kind === 'wide' || kind === 'name'),
    }
  }

  /** An empty table after an exact --name that globs would fill: say how (on stderr; scripts asking for JSON get none). */
  private async hintExactNames(): Promise<void> {
    const {flags} = this
    const forPeople = !this.jsonEnabled() && (this.output.kind === 'table' || this.output.kind === 'wide')
    const hint = forPeople ? await containersNameHint(await this.client(), this.filters()) : undefined
    if (hint) this.stderrLine(`${hint}${flags.all ? '' : ' (and -a for containers that are not running)'}`)
  }

  private table(entries: ContainerListEntry[], wide: boolean, noTrunc: boolean): Buffer {
    const {headers, rows} = entryRows(entries, {...this.tableOptions(), noTrunc, wide, paintExitCode: this.chalk.red})
    return renderTableBytes(headers, rows)
  }
}

/** crictl ps -v's blocks, in podctl's own mode too (the last blank line dropped, as podctl ends its output). */
function verboseBlocks(entries: ContainerListEntry[]): string {
  const now = Date.now()
  return entries
    .map((entry) => containerBlock(entry.container, now))
    .join('')
    .trimEnd()
}
