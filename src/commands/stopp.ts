/**
 * `podctl stopp`: crictl's stopp as podctl kill --keep: the pods' containers stopped the kubelet's
 * way (preStop, grace period), then their sandboxes; containers and sandboxes stay.
 */
import {example} from '../lib/base-command.js'
import {withoutStaticPodFlags} from '../lib/flags.js'
import Kill from './kill.js'

/**
 * kill's flags; --keep is implied, so it is not offered, nor --pod-logs-root (stopp removes no log directory), nor kill's --static.
 * -f is crictl stopp's --force here; the manifest is --filename.
 */
const killFlags = {
  ...withoutStaticPodFlags(Kill.flags),
  filename: {...Kill.flags.filename, char: undefined},
  force: {...Kill.flags.force, char: 'f' as const},
  keep: {...Kill.flags.keep, hidden: true},
  'delete-claims': {...Kill.flags['delete-claims'], hidden: true},
  'pod-logs-root': {...Kill.flags['pod-logs-root'], hidden: true},
}

export default class Stopp extends Kill {
  static override summary = "Stop pods but keep their sandboxes (crictl stopp): podctl kill --keep, the kubelet's way."

  static override description = `The same as podctl kill --keep: every running container gets its preStop hook within the \
grace period, then StopContainer; then StopPodSandbox for every sandbox of the pod. The stopped containers and sandboxes \
stay for inspection (podctl ps -a, podctl logs); podctl rmp removes them. The record of a pod the runtime no longer \
has stays too (the pod counts as not found). Takes kill's options: names, name_namespace or \
sandbox ID prefixes, -l, -a/--all (with -n; both choose only pods podctl made), --grace-period, \
-f/--force (no hook, no grace).`

  static override examples = [
    example('Stop a pod of the default namespace', 'web'),
    example('Stop by sandbox ID prefix, at once', '3f2a9c -f'),
    example('Stop every pod podctl made in a namespace', '-a -n ci'),
  ]

  static override flags = killFlags

  protected override keepSandboxes(): boolean {
    return true
  }
}
