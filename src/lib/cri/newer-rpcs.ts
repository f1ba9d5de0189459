/**
 * Calls to RPCs that the CRI gained after containerd 1.6 (RuntimeConfig, CheckpointContainer, the
 * pod metrics pair). An older runtime answers UNIMPLEMENTED; the user then gets one line that names
 * the runtime as it names itself in Version ("containerd 1.6.20"), the RPC, and which runtimes have
 * it, instead of a bare gRPC status. Exit code 6 (Unimplemented), as for every UNIMPLEMENTED.
 */
import {UnimplementedError} from '../errors.js'
import {CRI_CLIENT_VERSION, type CriClient} from './client.js'

/** Why each newer RPC may be missing, and where it is found. */
export const NEWER_RPC_NEEDS = {
  RuntimeConfig: "the CRI's RuntimeConfig needs containerd 2.0+ or CRI-O 1.28+",
  CheckpointContainer: "the CRI's checkpoint API needs containerd 1.7+ or CRI-O 1.25+",
  ListPodSandboxMetrics: "the CRI's pod metrics API is newer than containerd 1.x; statsp shows CPU and memory",
  ListMetricDescriptors: "the CRI's pod metrics API is newer than containerd 1.x; statsp shows CPU and memory",
} as const

export type NewerRpc = keyof typeof NEWER_RPC_NEEDS

/**
 * `call`, with an UNIMPLEMENTED answer turned into "containerd 1.6.20 does not implement RPC (why)".
 * The runtime's name costs one Version call, made only on that failure; if it fails too, the
 * endpoint names the runtime.
 */
export async function callNewerRpc<T>(client: CriClient, rpc: NewerRpc, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (!(error instanceof UnimplementedError)) throw error
    const unimplemented = new UnimplementedError(`${await runtimeLabel(client)} does not implement ${rpc} (${NEWER_RPC_NEEDS[rpc]})`)
    unimplemented.grpc = error.grpc
    throw unimplemented
  }
}

/** "containerd 1.6.20" from Version (its leading "v" dropped), else "runtime at ENDPOINT". */
export async function runtimeLabel(client: CriClient): Promise<string> {
  try {
    const {runtimeName, runtimeVersion} = await client.runtime('version', {version: CRI_CLIENT_VERSION})
    if (runtimeName) return `${runtimeName}${runtimeVersion ? ` ${runtimeVersion.replace(/^v(?=\d)/, '')}` : ''}`
  } catch {
    // The name is only for the message: the UNIMPLEMENTED answer is what the user must see.
  }

  return `runtime at ${client.runtimeEndpoint}`
}
