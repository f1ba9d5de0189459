/**
 * `podctl ui`: a full-screen live view of the node (src/lib/ui/session.ts). The terminal UI library
 * is loaded by this command alone, so no other command starts slower.
 */
import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {podDirRootFlag, podLogsRootFlag} from '../lib/flags.js'
import {wantsColor} from '../lib/output/color.js'
import {runNodeView} from '../lib/ui/session.js'
import {parseLabelSelector} from '../lib/util/filters.js'

export default class Ui extends BaseCommand<typeof Ui> {
  static override summary = 'A full-screen live view of the node: pods, containers, logs, a shell, describe, kill.'

  static override description = `For a node whose API server is down, or that has none. The pods (default screen) with \
READY, STATUS as podctl status computes it, RESTARTS, CPU and memory from the runtime's stats, AGE and IP, refreshed \
live: at once when the runtime streams a container event (containerd 1.7+, CRI-O), by listing otherwise, never more \
than once a second. Each refresh is three runtime calls whatever the number of pods. Keys: ↑↓ move, / filter by \
name, o sort, Enter a pod's containers, l logs (p the previous attempt, f follow), s a shell (exec -it; exit it to \
come back), d describe, K kill (asks first; through the pod's worker, as podctl kill), Esc back, ? help, q quit. \
The header names the runtime and its version, its conditions, pod and container counts, the image filesystem's use \
and who owns the node (a kubelet, podctl supervisors, or nobody). A runtime that stops answering is said on the \
screen and asked again every second. The terminal is restored on every way out (q, Ctrl-C, SIGTERM). Needs a \
terminal on stdin and stdout; colour follows --color and NO_COLOR. See docs/ui.md.`

  static override examples = [
    example('The live view of every pod on the node'),
    example('Only the pods of one namespace', '-n kube-system'),
    example('Pods labelled app=web, without colour', '-l app=web --no-color'),
  ]

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Only pods of this namespace, exact or with * globs.'}),
    label: Flags.string({char: 'l', summary: 'Only pods with label KEY=VALUE (repeatable; all must match).', multiple: true}),
    'pod-dir-root': podDirRootFlag,
    'pod-logs-root': podLogsRootFlag,
  }

  public async run(): Promise<void> {
    const {flags} = this
    if (!process.stdin.isTTY || !process.stdout.isTTY)
      throw new UsageError('podctl ui needs a terminal on stdin and stdout; for a script use podctl pods or podctl status')
    const interruption = this.interruptSignal()
    await runNodeView({
      client: await this.client(),
      podDirRoot: flags['pod-dir-root'],
      podLogsRoot: flags['pod-logs-root'],
      namespace: flags.namespace,
      labels: parseLabelSelector(flags.label),
      color: wantsColor({flag: flags.color}),
      signal: interruption.signal,
    })
    interruption.settle()
  }
}
