/** How podctl waits for a CRI channel to connect: at once on a refused connection, else until a deadline. */
type GrpcModule = typeof import('@grpc/grpc-js')

/**
 * Waits for the channel to be READY. Unlike waitForReady, a refused connection (a stale socket
 * file with no runtime behind it) fails at once instead of retrying until the deadline.
 */
export function waitConnected(
  grpc: GrpcModule,
  client: InstanceType<GrpcModule['Client']>,
  deadline: number,
): Promise<'READY' | 'REFUSED' | 'TIMEOUT'> {
  const channel = client.getChannel()
  const {READY, TRANSIENT_FAILURE, SHUTDOWN} = grpc.connectivityState
  return new Promise((resolve) => {
    const check = (): void => {
      const state = channel.getConnectivityState(true)
      if (state === READY) return resolve('READY')
      if (state === TRANSIENT_FAILURE || state === SHUTDOWN) return resolve('REFUSED')
      if (Date.now() >= deadline) return resolve('TIMEOUT')
      channel.watchConnectivityState(state, deadline, (error) => (error ? resolve('TIMEOUT') : check()))
    }

    check()
  })
}
