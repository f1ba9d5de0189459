import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {resolvePodSandboxes} from '../lib/node/resolve.js'
import {forwardingLine, type Listening, parsePortSpec} from '../lib/streaming/port-forward.js'
import {portForwardStream} from '../lib/streaming/runtime-streams.js'

export interface PortForwardResult {
  podSandboxId: string
  listening: Listening[]
}

export default class PortForward extends BaseCommand<typeof PortForward> {
  // Forwarding lasts until Ctrl-C; --timeout bounds only the calls and the set-up.
  static override timeoutBoundsCommand = false
  static override summary = "Forward local ports to a pod's ports until Ctrl-C."

  static override description = `Listens on local ports and forwards each connection to a port of the pod, through the \
runtime's streaming server (CRI PortForward), as kubectl port-forward and crictl port-forward do. Each PORT is \
[LOCAL:]REMOTE: 8080 listens on 8080 for the pod's 8080, 9000:80 on 9000 for 80, and :80 or 0:80 on a free port that \
podctl prints. Prints "Forwarding from ADDRESS:LOCAL -> REMOTE" per listener (and "Handling connection for LOCAL" per \
connection), as kubectl does.

Listens on 127.0.0.1 unless --address says otherwise (several comma-separated addresses; "localhost" means 127.0.0.1 \
and ::1). Ctrl-C stops listening, closes the session and exits 0. A runtime without a usable streaming server fails \
with exit 16; a local port in use fails with exit 2 before anything is forwarded.`

  static override examples = [
    {description: "The pod's port 80 on local port 8080", command: '<%= config.bin %> <%= command.id %> web 8080:80'},
    {description: 'Two ports, one on a free local port', command: '<%= config.bin %> <%= command.id %> -n shop web 8080 :9090'},
    {description: 'Reachable from other hosts', command: '<%= config.bin %> <%= command.id %> web 8080:80 --address 0.0.0.0'},
  ]

  static override usage = '<%= command.id %> POD [LOCAL:]REMOTE... [-n NAMESPACE] [--address ADDRESS]'
  static override enableJsonFlag = false
  static override strict = false

  static override args = {
    pod: Args.string({description: 'Pod name (in --namespace), name_namespace or sandbox ID prefix.', required: true}),
    ports: Args.string({description: 'One or more [LOCAL:]REMOTE port pairs.', required: true}),
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod (default "default").'}),
    address: Flags.string({
      summary: 'Local addresses to listen on, comma-separated ("localhost": 127.0.0.1 and ::1).',
      default: '127.0.0.1',
    }),
  }

  public async run(): Promise<PortForwardResult> {
    const ports = this.positional.slice(1).map((token) => parsePortSpec(token))
    const addresses = this.flags.address.split(',')
    const client = await this.client()
    const [sandbox] = await resolvePodSandboxes(client, this.args.pod, {namespace: this.flags.namespace})
    const interruption = this.interruptSignal()
    const forwarder = await portForwardStream(client, sandbox, ports, {
      addresses,
      onLine: (line, to) => (to === 'stdout' ? this.log(line) : this.stderrLine(line)),
    })
    for (const entry of forwarder.listening) this.log(forwardingLine(entry))
    interruption.signal.addEventListener('abort', () => forwarder.close(), {once: true})
    await forwarder.ended
    interruption.settle()
    return {podSandboxId: sandbox.id, listening: forwarder.listening}
  }
}
