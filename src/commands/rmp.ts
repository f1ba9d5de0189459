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
both choose only pods podctl made; crictl's rmp -a, podctl as crictl, removes every pod).`

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

  protected override keepSandboxes(): boolean {
    return false
  }

  protected override admit(pods: SelectedPod[], failures: PodFailure[]): SelectedPod[] {
    if (this.flags.force || this.flags['grace-period'] !== undefined) return pods
    return pods.filter((pod) => {
      const ready = pod.sandboxes.find((sandbox) => sandbox.state === 'SANDBOX_READY')
      if (!ready) return true
      const error = new RuntimeError(`pod ${pod.fullName} is running; stop it first (podctl stopp ${pod.fullName}) or pass --force`)
      failures.push(podFailure(pod.fullName, error))
      return false
    })
  }
}
