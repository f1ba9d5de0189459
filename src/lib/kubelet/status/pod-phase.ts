/**
 * The pod phase the kubelet's getPhase (pkg/kubelet/kubelet_pods.go) would compute, and its ready
 * condition, from what the runtime holds: pure functions of the containers getPodStatus reports.
 */
import type {KubeContainerState} from '../../kube/helpers.js'
import type {ContainerType, RestartPolicy} from '../../kube/labels.js'

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown'

/** What the phase depends on; containers newest first (every attempt), as getPodStatus reports them. */
export interface PhaseInput {
  restartPolicy: RestartPolicy
  /** Whether the newest sandbox is READY. */
  sandboxReady: boolean
  containers: ReadonlyArray<{name: string; type: ContainerType; state: KubeContainerState; exitCode: number | null; sidecar?: boolean}>
}

interface NamedContainerState {
  /** The newest attempt's state. */
  state: KubeContainerState
  exitCode: number | null
  /** The exit code of the newest earlier attempt that exited (the kubelet's LastTerminationState). */
  lastExitCode: number | null
}

/**
 * The kubelet's getPhase, with the spec replaced by what the runtime holds: one "spec container"
 * per container name and type, its state taken from the newest attempt and its last termination
 * from the attempts before (as convertToAPIContainerStatuses does).
 *
 * Without a kubelet nothing restarts a pod whose sandbox is stopped, so when the newest sandbox is
 * not READY and no container runs, the pod is treated as terminal (the kubelet's podIsTerminal
 * branch): Succeeded when every app container exited 0, else Failed, whatever the restart policy.
 * A stopped pod that never ran its app containers is Failed too: it cannot get further.
 */
export function computePhase(input: PhaseInput): PodPhase {
  const byName = latestByName(input.containers)
  const app = [...byName.values()].filter((entry) => entry.type === 'app')
  // A sidecar never completes: running, or restarting once the app containers exist, it is not pending
  // initialization, and its exit code fails nothing (it is restarted whatever the restartPolicy).
  const init = [...byName.values()].filter(
    (entry) => entry.type === 'init' && !(entry.sidecar && (entry.state === 'Running' || app.length > 0)),
  )
  const anyRunning = input.containers.some((container) => container.state === 'Running')
  const terminal = !input.sandboxReady && !anyRunning

  let pendingInitialization = 0
  let failedInitialization = 0
  for (const {state, exitCode, lastExitCode, sidecar} of init) {
    if (state === 'Exited' && !sidecar) {
      if (exitCode !== 0) failedInitialization++
    } else if (state === 'Created' && lastExitCode !== null) {
      // Waiting to restart after a previous run.
      if (lastExitCode !== 0) failedInitialization++
    } else {
      pendingInitialization++
    }
  }

  let unknown = 0
  let running = 0
  let waiting = 0
  let stopped = 0
  let succeeded = 0
  for (const {state, exitCode, lastExitCode} of app) {
    switch (state) {
      case 'Running': {
        running++
        break
      }

      case 'Exited': {
        stopped++
        if (exitCode === 0) succeeded++

        break
      }

      case 'Created': {
        if (lastExitCode === null) waiting++
        // Waiting to restart after a run: stopped, but (as in getPhase) never counted as succeeded.
        else stopped++

        break
      }

      default:
        unknown++
    }
  }

  if (failedInitialization > 0 && (input.restartPolicy === 'Never' || terminal)) return 'Failed'
  if (terminal) {
    if (app.length > 0 && stopped === app.length) return stopped === succeeded ? 'Succeeded' : 'Failed'
    return 'Failed'
  }

  // Init containers still to run; the app containers have not started.
  if (pendingInitialization > 0 && running === 0 && stopped === 0) return 'Pending'
  // No app container created yet: the kubelet reports the spec's containers as waiting.
  if (app.length === 0 || waiting > 0) return 'Pending'
  if (running > 0 && unknown === 0) return 'Running'
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (input.restartPolicy === 'Always') return 'Running'
    if (stopped === succeeded) return 'Succeeded'
    if (input.restartPolicy === 'Never') return 'Failed'
    return 'Running'
  }

  return 'Pending'
}

/** The ready condition `status --wait-for ready` and `run --wait` check. */
export function isPodReady(phase: PodPhase, input: PhaseInput): boolean {
  if (phase !== 'Running' || !input.sandboxReady) return false
  const latest = [...latestByName(input.containers).values()]
  const app = latest.filter((entry) => entry.type === 'app')
  // Sidecars count as containers that must run.
  const sidecars = latest.filter((entry) => entry.type === 'init' && entry.sidecar)
  return app.length > 0 && [...app, ...sidecars].every((entry) => entry.state === 'Running')
}

type Named = NamedContainerState & {type: ContainerType; sidecar?: boolean}

function latestByName(containers: PhaseInput['containers']): Map<string, Named> {
  const byName = new Map<string, Named>()
  for (const container of containers) {
    const key = `${container.type}/${container.name}`
    const seen = byName.get(key)
    const {type, state, exitCode, sidecar} = container
    if (!seen) byName.set(key, {type, state, exitCode, lastExitCode: null, sidecar})
    else if (seen.lastExitCode === null && container.state === 'Exited') seen.lastExitCode = container.exitCode
  }

  return byName
}
