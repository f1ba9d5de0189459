/** pkg/probe/tcp: a TCP connect within the timeout; the connection is closed at once. */
import {connect} from 'node:net'

import {goDialError, joinHostPort, type ProbeOutcome} from './types.js'

export function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  const address = joinHostPort(host, port)
  return new Promise((resolve) => {
    const socket = connect({host, port})
    const timer = setTimeout(() => finish({status: 'failure', output: `dial tcp ${address}: i/o timeout`}), timeoutMs)
    function finish(outcome: ProbeOutcome): void {
      clearTimeout(timer)
      socket.removeAllListeners()
      socket.on('error', () => {})
      socket.destroy()
      resolve(outcome)
    }

    socket.once('connect', () => finish({status: 'success', output: ''}))
    // Every error is a failure, not an error (DoTCPProbe converts them so timeouts count).
    socket.once('error', (error: NodeJS.ErrnoException) => finish({status: 'failure', output: goDialError(address, error)}))
  })
}
