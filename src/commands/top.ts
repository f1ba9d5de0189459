import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {top, type TopProcess} from '../lib/host/top.js'
import {humanSize} from '../lib/output/format.js'
import {renderTable} from '../lib/output/table.js'

export interface TopResult {
  processes: TopProcess[]
}

export default class Top extends BaseCommand<typeof Top> {
  static override summary = 'Show the processes of a container, or of every running container of a pod, read from the host.'

  static override description = `Reads /proc on the host (podctl runs there as root), so it works on images without \
ps or a shell, where \`crictl exec CID ps\` cannot. A container's processes are those in its own cgroup: a debug \
container sharing its PID namespace is listed apart. PID is the process's pid inside the container, HOST PID the \
same process on the host (for strace, gdb, nsenter); USER as the container's /etc/passwd names it; CPU % is CPU \
time over the time since the process started (ps's %CPU, not a sample); MEM the resident memory. A POD shows each \
running container of its newest sandbox; a container that is not running fails with exit 18.

JSON and YAML: {"processes": [{"container", "containerId", "pid", "hostPid", "user", "cpuPercent", "rssBytes", \
"command"}]}.`

  static override examples = [
    example('The processes of every container of a pod', 'web -n shop'),
    example('One container', 'web/app -n shop'),
    example('Host pids, for a script', `web -o json | jq '.processes[].hostPid'`),
  ]

  static override args = {
    target: Args.string({
      description: 'POD (name, name_namespace or sandbox ID prefix) or CONTAINER (ID prefix or POD/CONTAINER)',
      required: true,
    }),
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod (default "default").'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  public async run(): Promise<TopResult> {
    const processes = await top(await this.client(), this.args.target, {namespace: this.flags.namespace})
    const result = {processes}
    await this.emit(result, () => Top.table(processes))
    return result
  }

  static table(processes: readonly TopProcess[]): string {
    const rows = processes.map((row) => [
      row.container,
      String(row.pid),
      String(row.hostPid),
      row.user,
      row.cpuPercent.toFixed(1),
      humanSize(row.rssBytes),
      row.command,
    ])
    return renderTable(['CONTAINER', 'PID', 'HOST PID', 'USER', 'CPU %', 'MEM', 'COMMAND'], rows)
  }
}
