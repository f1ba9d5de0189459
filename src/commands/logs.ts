import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {containerOrPodArg} from '../lib/flags.js'
import {parseDuration} from '../lib/util/duration.js'
import {UsageError} from '../lib/errors.js'
import {type LogStream, parseSince} from '../lib/logs/cri-log.js'
import {LogFileReader, OrderedWriter, showLog} from '../lib/logs/follow.js'
import {containerLiveness, containerLogTarget} from '../lib/node/container-logs.js'
import {configFlagAsContainer, resolveContainerArgument} from '../lib/node/container-flag.js'

export interface LogsResult {
  containerId: string
  path: string
  lines: number
  malformed: number
}

export default class Logs extends BaseCommand<typeof Logs> {
  // --timeout here is each call; --follow streams until the container exits, not a bound on the whole command.
  static override timeoutBoundsCommand = false
  static override summary = "Print a container's logs from its CRI log file."

  static override description = `Asks the runtime for the container's log_path (ContainerStatus) and reads that file \
from the node's filesystem, so run podctl where the runtime runs, as root. Lines in the CRI log format are joined \
when the runtime split them (P fragments + F end); Docker JSON-file lines are read too. Lines that are neither are \
skipped (--debug reports how many).

The container's stdout goes to podctl's stdout and its stderr to podctl's stderr, in the order written, like \
docker logs. With --stream only that stream is printed, on stdout, so it can be piped. A line the container never \
ended (it exited mid-line) is printed as it is, without a newline.

--follow keeps printing new lines until the container exits (checked about once a second), and follows the file \
across log rotation. --tail counts whole lines after --since and --stream are applied.`

  static override examples = [
    example('Logs of a container, by ID prefix', '4f2a9c'),
    example('Last 20 lines of container "app" of pod web in namespace shop, then follow', '-n shop web/app --tail 20 -f'),
    example('Errors of the last 10 minutes, with timestamps', '4f2a9c --since 10m --stream stderr -t'),
    example("As kubectl: pod web's only container (or its default-container annotation's)", '-n shop web'),
    example("Why did it restart? The previous attempt's log", '-n shop web/app --previous'),
    example('At most the first KiB of the log', '4f2a9c --limit-bytes 1024'),
  ]

  static override enableJsonFlag = false

  static override args = {
    container: containerOrPodArg,
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod in POD/CONTAINER (default "default").'}),
    container: Flags.string({
      summary: "The container of the pod named by CONTAINER (kubectl's -c; podctl's -c is crictl's --config).",
      helpValue: 'NAME',
    }),
    follow: Flags.boolean({char: 'f', summary: 'Keep printing new lines until the container exits.'}),
    tail: Flags.integer({summary: 'Only the last N lines (-1: all).', min: -1, helpValue: 'N'}),
    since: Flags.string({
      summary: 'Only lines newer than a duration (10m, 1h30m) or an RFC 3339 time.',
      helpValue: 'DURATION|TIME',
    }),
    timestamps: Flags.boolean({char: 't', summary: 'Prefix each line with its RFC 3339 timestamp (nanoseconds).'}),
    stream: Flags.option({options: ['stdout', 'stderr'] as const, summary: 'Only this stream (printed on stdout).'})(),
    previous: Flags.boolean({char: 'p', summary: "The previous attempt's log (the container before its last restart)."}),
    'limit-bytes': Flags.integer({
      summary: 'Stop after this many bytes of log text (-1: no limit), as kubectl and crictl logs --limit-bytes.',
      min: -1,
      helpValue: 'N',
    }),
  }

  public async run(): Promise<LogsResult> {
    const {flags} = this
    const sinceNanos = this.sinceNanos()
    const configAsContainer = await configFlagAsContainer(this.argv, this.flags.config)
    if (configAsContainer !== undefined) this.flags.config = undefined
    const client = await this.client()
    const {container, note} = await resolveContainerArgument(client, this.args.container, {
      namespace: this.flags.namespace,
      container: this.flags.container,
      configAsContainer,
    })
    if (note) this.stderrLine(note)
    const target = await containerLogTarget(client, container, {previous: flags.previous})
    const reader = await LogFileReader.open(target.path)
    if (flags.debug) this.debugLine(`reading ${target.path}`)

    // A closed pipe (`| head`) ends the command quietly, exit 0, as for every command (output/closed-pipe.ts).
    const stream: LogStream | undefined = flags.stream
    const writer = new OrderedWriter({stdout: process.stdout, stderr: stream ? process.stdout : process.stderr}, flags['limit-bytes'])
    try {
      const shown = await showLog(reader, writer, {
        sinceNanos,
        stream,
        tail: flags.tail,
        timestamps: flags.timestamps,
        follow: flags.follow && target.live,
        isRunning: containerLiveness(client, container.id),
      })
      if (flags.debug && shown.malformed > 0) {
        this.debugLine(`skipped ${shown.malformed} line(s) of ${target.path} that are neither CRI nor Docker JSON log lines`)
      }

      return {containerId: container.id, path: target.path, ...shown}
    } finally {
      await reader.close()
    }
  }

  /** --since as epoch nanoseconds, or undefined without it. */
  private sinceNanos(): bigint | undefined {
    const {since} = this.flags
    if (since === undefined) return undefined
    const nanos = parseSince(since, Date.now(), parseDuration)
    if (nanos === undefined) {
      throw new UsageError(`--since "${since}" is neither a duration (10m, 1h30m) nor an RFC 3339 time (2024-05-01T10:00:00Z)`)
    }

    return nanos
  }
}
