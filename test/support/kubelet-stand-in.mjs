// A stand-in for a kubelet, run through a symlink named `kubelet` so its command name is `kubelet`.
// It does what podctl's detection looks at and nothing else: with --connect SOCKET it holds a connection
// to the runtime socket; under --root-dir it serves <root>/pod-resources/kubelet.sock. Other flags
// (--container-runtime-endpoint, --config, --pod-manifest-path) are only there to be read from its argv.
import {mkdirSync, rmSync} from 'node:fs'
import {connect, createServer} from 'node:net'
import {dirname} from 'node:path'

const args = process.argv.slice(2)
const value = (name) => {
  const at = args.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`))
  if (at === -1) return
  return args[at].includes('=') ? args[at].slice(args[at].indexOf('=') + 1) : args[at + 1]
}

const held = []
const target = value('connect')
if (target) held.push(connect(target))
const root = value('root-dir')
if (root && !args.includes('--no-pod-resources')) {
  const path = `${root}/pod-resources/kubelet.sock`
  mkdirSync(dirname(path), {recursive: true})
  rmSync(path, {force: true})
  const server = createServer((socket) => socket.end())
  await new Promise((resolve) => {
    server.listen(path, resolve)
  })
  held.push(server)
}

process.stdout.write('ready\n')
// SIGTERM ends it: the sockets go with the process, as a kubelet's do.
const keepAlive = setInterval(() => {}, 1 << 30)
process.on('SIGTERM', () => {
  clearInterval(keepAlive)
  for (const handle of held) {
    if (handle.destroy) handle.destroy()
    else handle.close()
  }
})
