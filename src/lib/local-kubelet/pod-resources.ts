/**
 * The kubelet's pod-resources socket (<root-dir>/pod-resources/kubelet.sock). The file stays after the
 * kubelet stops, so only a connection that is accepted says a kubelet is alive behind it.
 */
import {existsSync} from 'node:fs'
import {connect} from 'node:net'

const CONNECT_TIMEOUT_MS = 200

export function podResourcesSocket(rootDir: string): string {
  return `${rootDir.replace(/\/$/, '')}/pod-resources/kubelet.sock`
}

/** Whether something accepts connections on the unix socket at `path` (false at once when there is no file). */
export async function socketAnswers(path: string, timeoutMs = CONNECT_TIMEOUT_MS): Promise<boolean> {
  if (!existsSync(path)) return false
  return new Promise<boolean>((resolve) => {
    const socket = connect(path)
    const done = (answered: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(answered)
    }

    const timer = setTimeout(() => done(false), timeoutMs)
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}
