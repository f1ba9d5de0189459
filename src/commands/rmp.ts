/**
 * `podctl rmp`: crictl's rmp as podctl kill: stopped pods are removed; a running pod is refused
 * unless --force, which kills it at once (as crictl rmp -f does) before removing it.
 */
import {Flags} from '@oclif/core'

import {example} from '../lib/base-command.js'
import {RuntimeError} from '../lib/errors.js'
import {withoutStaticPodFlags} from '../lib/flags.js'
import type {SelectedPod} from '../lib/node/select.js'
import {type PodFailure, podFailure} from '../lib/output/collapse-failures.js'
import type {KillPodResult} from '../lib/kubelet/kuberuntime/kill.js'
import {isCrictl} from '../lib/crictl/personality.js'
import {info} from '../lib/crictl/log.js'
import {givenRef, NOTHING_TO_REMOVE, removedSandbox, runningSandbox, stoppedSandbox} from '../lib/crictl/messages.js'
import Kill from './kill.js'

/** kill's flags; --keep is implied (stopp) or meaningless (rmp), so it is not offered; --static is kill's own; -f is crictl's --force. */
const killFlags = {
  ...withoutStaticPodFlags(Kill.flags),
  filename: {...Kill.flags.filename, char: undefined},
  keep: {...Kill.flags.keep, hidden: true},
}

export default class Rmp extends Kill {
  static override summary = 'Remove pods (crictl rmp): their containers and sandboxes; running pods only with --force.'

  static override description = `Removes every container and sandbox of each pod, and the pod's directory, as podctl kill \
does. A pod that is still running (a Ready sandbox) is refused, exit 9, unless -f/--force: then its containers are killed \
at once (no preStop hook, no grace period, as crictl rmp -f), or with --grace-period N the kubelet's way; podctl stopp \
first stops a pod gracefully. A pod the runtime no longer has but podctl still records for this runtime loses its \
record, as with podctl kill. Takes kill's options: names, name_namespace or sandbox ID prefixes, -l, -a/--all (with -n; \
both choose only pods podctl made, except as crictl, which removes every pod).`

  static override examples = [
    example('Remove a stopped pod', 'web'),
    example('Remove a running pod at once', '-f web'),
    example('Remove every pod podctl made in a namespace', '-af -n ci'),
  ]

  static override flags = {
    ...killFlags,
    force: Flags.boolean({char: 'f', summary: 'Remove running pods too (killed at once unless --grace-period is given).'}),
  }

  public override async init(): Promise<void> {
    await super.init()
    // -f with --grace-period means "remove running pods too, but gracefully": kill without --force.
    if (this.flags.force && this.flags['grace-period'] !== undefined && this.flags['grace-period'] > 0) this.flags.force = false
  }

  /** Sandboxes that were Ready when rmp -f took them: crictl says it stopped them before removing them. */
  private readonly wereReady = new Set<string>()

  protected override keepSandboxes(): boolean {
    return false
  }

  /** crictl: "Removed sandbox ID" for each sandbox (after "Stopped sandbox ID" for a running one), as the ID was typed. */
  protected override line(result: KillPodResult): string {
    if (!isCrictl() || result.recordOnly) return super.line(result)
    return result.sandboxIds
      .flatMap((id) => {
        const ref = givenRef(id, this.positional)
        return this.wereReady.has(id) ? [stoppedSandbox(ref), removedSandbox(ref)] : [removedSandbox(ref)]
      })
      .join('\n')
  }

  protected override nothingToKill(note: string): void {
    if (isCrictl()) info(NOTHING_TO_REMOVE.pods)
    else super.nothingToKill(note)
  }

  /** crictl rmp reports every failed pod, one plain line each (urfave/cli's list of errors), and exits 1. */
  protected override reportKillFailures(failures: PodFailure[]): void {
    if (!isCrictl() || failures.length === 0) return super.reportKillFailures(failures)
    for (const failure of failures) process.stderr.write(`${failure.message}\n`)
    process.exitCode = failures[0].exitCode
  }

  protected override admit(pods: SelectedPod[], failures: PodFailure[]): SelectedPod[] {
    for (const pod of pods) for (const sandbox of pod.sandboxes) if (sandbox.state === 'SANDBOX_READY') this.wereReady.add(sandbox.id)
    if (this.flags.force || this.flags['grace-period'] !== undefined) return pods
    return pods.filter((pod) => {
      const ready = pod.sandboxes.find((sandbox) => sandbox.state === 'SANDBOX_READY')
      if (!ready) return true
      const error = new RuntimeError(
        isCrictl()
          ? runningSandbox(givenRef(ready.id, this.positional))
          : `pod ${pod.fullName} is running; stop it first (podctl stopp ${pod.fullName}) or pass --force`,
      )
      failures.push(podFailure(pod.fullName, error))
      return false
    })
  }
}
