/**
 * `podctl gc`: one garbage collection round the kubelet's way (kubelet/gc/collect.ts), on podctl's
 * own objects only: the library's pods whose session is gone, dead containers beyond one per pod and container name with their logs, empty
 * old sandboxes, log directories of deleted pods, and unused images podctl pulled when the image
 * filesystem is past the high threshold; --dry-run says why, and what it leaves alone.
 */
import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {RuntimeError} from '../lib/errors.js'
import {outputFlag, podDirRootFlag, podLogsRootFlag} from '../lib/flags.js'
import {shortId} from '../lib/kube/helpers.js'
import {humanSize} from '../lib/output/format.js'
import type {GcResult} from '../lib/kubelet/gc/collect.js'
import type {ReapedDebug} from '../lib/debug/reap.js'
import type {GcLeftAlone, GcReason} from '../lib/kubelet/gc/explain.js'
import {imageGcFlags, imageGcPolicyFromFlags} from '../lib/kubelet/gc/flags.js'

export default class Gc extends BaseCommand<typeof Gc> {
  static override summary = "Collect podctl's own garbage the kubelet's way: dead containers, old sandboxes, deleted pods' logs, images."

  static override description = `One round of the kubelet's garbage collection, on what podctl can prove it made on this \
runtime: crictl's, a kubelet's and other runtimes' containers, sandboxes, log directories, links and images are never \
removed (podctl's carry its io.podctl annotations, its log directories its .podctl-pod.json mark; its images are those \
it pulled). Pods: first, pods the podctl library started whose test process is gone (SIGKILLed, crashed; its pid \
and start time are on the pod) are killed with their grace period and logs, as the library's next connect() would. \
Containers: podctl's containers that are not running, grouped by pod UID and container name, keep their \
newest instance (MaxPerPodContainer 1); older ones are removed with their log file and /var/log/containers link. \
Sandboxes: a pod's older sandboxes go once not ready and empty; its newest stays. Logs: a directory under \
--pod-logs-root that podctl made goes when the runtime has no sandbox of its pod and no pod directory records it (and it \
has not changed for a minute), with the links into it; so do dead links into podctl's log directories. Images: when the \
image filesystem is at --image-gc-high-threshold or above, unused, unpinned images podctl pulled, first seen at least \
--minimum-image-ttl-duration ago, are removed, least recently used first, until usage would be at \
--image-gc-low-threshold. podctl remembers when it first saw each image in a file beside the pod directories. \
--dry-run says why each object would go and counts what is left alone; -o json has both (reasons, leftAlone). -n limits \
pods, containers, sandboxes and logs to one namespace; images are the node's (100 leaves them). A kubelet that uses the \
runtime collects its own garbage: gc refuses to run beside one (exit 17) unless --force. First of all, the debug \
containers and debug pods of podctl debug sessions whose podctl is gone (SIGKILL, a lost SSH session) are removed: \
only podctl's, and only when that process provably ended (docs/debugging.md); -o json has them under debugSessions.`

  static override examples = [
    example('Collect garbage now'),
    example('Show what would go and why, and what is left alone', '--dry-run'),
    example("Only one namespace's pods, leaving images alone", '-n ci --image-gc-high-threshold 100'),
    example('Free the image filesystem down to 50% when it is 60% full', '--image-gc-high-threshold 60 --image-gc-low-threshold 50'),
  ]

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Only the pods, containers, sandboxes and log directories of this namespace.'}),
    'dry-run': Flags.boolean({summary: 'List what would be removed and why, and what is left alone; remove nothing.'}),
    ...imageGcFlags,
    'pod-logs-root': podLogsRootFlag,
    'pod-dir-root': podDirRootFlag,
    force: Flags.boolean({summary: 'Collect although a kubelet uses this runtime (it collects its own garbage; the two would race).'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  public async run(): Promise<GcCommandResult> {
    const {flags} = this
    const images = imageGcPolicyFromFlags(flags)
    const client = await this.client()
    if (!flags['dry-run']) {
      const {refuseBesideKubelet} = await import('../lib/local-kubelet/runtime-owner.js')
      const instead = 'the kubelet collects its own garbage'
      await refuseBesideKubelet(client, {force: flags.force, instead, warn: (line) => this.warnLine(line)})
    }

    const [{collectGarbage}, {ImageRecords, imageRecordsFile}, {imageShortfall}, {sessionReaper}] = await Promise.all([
      import('../lib/kubelet/gc/collect.js'),
      import('../lib/kubelet/gc/image-records.js'),
      import('../lib/kubelet/gc/collector.js'),
      import('../lib/kubelet/workers/gone-sessions.js'),
    ])
    const settings = {images, logsRoot: flags['pod-logs-root'], podDirRoot: flags['pod-dir-root'], namespace: flags.namespace}
    // First what killed `podctl debug` sessions left: their containers then die and are collected below.
    const {reapGoneDebugSessions} = await import('../lib/debug/reap.js')
    const reap = {podDirRoot: settings.podDirRoot, podLogsRoot: settings.logsRoot, namespace: flags.namespace, dryRun: flags['dry-run']}
    const debugSessions = await reapGoneDebugSessions(client, {...reap, requestedBy: 'podctl gc'})
    const imageRecords = new ImageRecords(imageRecordsFile(settings.podDirRoot, client.runtimeEndpoint))
    const reapPod = sessionReaper(client, {podDirRoot: settings.podDirRoot, podLogsRoot: settings.logsRoot, requestedBy: 'podctl gc'})
    const collected = await collectGarbage(client, settings, {dryRun: flags['dry-run'], imageRecords, reapPod})
    const result = {...collected, debugSessions}
    await this.emit(result, () => this.render(result))
    const shortfall = imageShortfall(result)
    if (shortfall) this.warnLine(shortfall)
    const failures = [...debugSessions.failures, ...result.failures]
    this.reportFailures(failures.map(({object, message}) => new RuntimeError(`${object}: ${message}`)))
    return result
  }

  private render(result: GcCommandResult): string {
    const verb = result.dryRun ? 'would remove' : 'removed'
    // A dry run says why each object would go (from result.reasons, in the same order per kind).
    const why = (kind: GcReason['kind'], object: string) => {
      const reason = result.dryRun ? result.reasons.find((entry) => entry.kind === kind && entry.object === object) : undefined
      return reason ? `\n  why: ${reason.why}` : ''
    }

    const gone = (session: string) => `: its session, ${session}, is gone`
    const removals = [
      ...result.debugSessions.containers.map(
        (c) => `${verb} debug container ${c.name} (${shortId(c.id)}) of pod ${c.pod}${gone(c.session)}`,
      ),
      ...result.debugSessions.pods.map((p) => `${verb} debug pod ${p.pod}${gone(p.session)}`),
      ...result.pods.map(({pod}) => `${verb} pod ${pod}${why('pod', pod)}`),
      ...result.containers.map((c) => {
        const log = c.logPath ? ` and its log ${c.logPath}` : ''
        const line = `${verb} container ${c.name} (attempt ${c.attempt}, ${shortId(c.id)})${c.pod ? ` of pod ${c.pod}` : ''}${log}`
        return line + why('container', c.id)
      }),
      ...result.sandboxes.map((s) => `${verb} sandbox ${shortId(s.id)} (attempt ${s.attempt}) of pod ${s.pod}${why('sandbox', s.id)}`),
      ...result.podLogDirectories.map((path) => `${verb} log directory ${path}${why('pod log directory', path)}`),
      ...result.containerLogLinks.map((path) => `${verb} dead log link ${path}${why('log link', path)}`),
      ...result.images.removed.map((image) => `${verb} image ${image.ref} (${humanSize(image.sizeBytes)})${why('image', image.ref)}`),
    ]
    const lines = removals.length > 0 ? removals : ['nothing to collect']
    if (result.dryRun) lines.push(...result.leftAlone.map((alone) => `left alone: ${describeLeftAlone(alone)}`))
    const {images} = result
    if (images.usageBefore) {
      const after = images.usageAfter ? `, now ${images.usageAfter.usagePercent}%` : ''
      lines.push(
        `image filesystem ${images.usageBefore.mountpoint}: ${images.usageBefore.usagePercent}% used${after} ` +
          `(high threshold ${images.highThresholdPercent}%, low ${images.lowThresholdPercent}%)`,
      )
    } else if (!images.ran) lines.push('images: left alone (--image-gc-high-threshold 100)')
    return lines.join('\n')
  }
}

/** A round's result, and the debug sessions' leftovers removed before it. */
export type GcCommandResult = GcResult & {debugSessions: ReapedDebug}

/** "3 dead containers: not made by podctl (...)". */
function describeLeftAlone(alone: GcLeftAlone): string {
  const nouns: Record<GcLeftAlone['kind'], [string, string]> = {
    pod: ['pod', 'pods'],
    container: ['dead container', 'dead containers'],
    sandbox: ['stopped sandbox', 'stopped sandboxes'],
    'pod log directory': ["deleted pod's log directory", "deleted pods' log directories"],
    'log link': ['dead log link', 'dead log links'],
    image: ['unused image', 'unused images'],
  }
  const [one, many] = nouns[alone.kind]
  return `${alone.count} ${alone.count === 1 ? one : many}: ${alone.why}`
}
