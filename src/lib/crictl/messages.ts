/**
 * What crictl v1.29's mutating commands print: on stdout each ID as the user typed it once done
 * (crictl hands the runtime the argument, which resolves a prefix), "Stopped sandbox ID",
 * "Removed sandbox ID", "Deleted: TAG"; on stderr logrus lines for notes and per-item failures,
 * then one summary error. podctl acts the same way it always does; only the words change.
 */
import {PodctlError} from '../errors.js'
import {error as logError} from './log.js'
import {crictlFailure} from './errors.js'

/** The argument the user typed for this object: an ID prefix of it when one was given, else the full ID. */
export function givenRef(id: string, refs: readonly string[]): string {
  return refs.find((ref) => ref !== '' && id.startsWith(ref)) ?? id
}

export const NOTHING_TO_REMOVE = {
  containers: 'No containers to remove',
  pods: 'No pods to remove',
  images: 'No images to remove',
} as const

export const stoppedSandbox = (ref: string) => `Stopped sandbox ${ref}`
export const removedSandbox = (ref: string) => `Removed sandbox ${ref}`
export const deletedImage = (name: string) => `Deleted: ${name}`

/** rm's summary error after its per-container logrus errors; rmi's after its per-image ones. */
export const UNABLE_TO_REMOVE_CONTAINERS = 'unable to remove container(s)'
export const UNABLE_TO_REMOVE_IMAGES = 'unable to remove the image(s)'

export const runningContainer = (ref: string) => `container "${ref}" is running, please stop it first`
export const runningSandbox = (ref: string) => `pod sandbox "${ref}" is running, please stop it first`

/** What each command says it was doing when a runtime call failed (the prefix of its one error line). */
export const DOING = {
  start: (ref: string) => `starting the container "${ref}"`,
  stop: (ref: string) => `stopping the container "${ref}"`,
  update: (ref: string) => `updating container resources for "${ref}"`,
  stopp: (ref: string) => `stopping the pod sandbox "${ref}"`,
  rmp: (ref: string) => `removing the pod sandbox "${ref}"`,
  removal: (ref: string) => `removing container "${ref}" failed`,
  inspect: {
    container: (ref: string) => `getting the status of the container "${ref}"`,
    pod: (ref: string) => `getting the pod sandbox status for "${ref}"`,
    image: (ref: string) => `image status for "${ref}" request`,
  },
  create: () => 'creating container',
  runp: () => 'run pod sandbox',
  run: () => 'running container',
} as const

/**
 * rm and rmi's ending: a logrus error line per failed item (crictl goes on to the next), then
 * one error for the command, with the first failure's code and exit code. Nothing when none failed.
 */
export function crictlItemFailures(failures: ReadonlyArray<{error: PodctlError; line: string}>, summary: string): PodctlError | undefined {
  for (const {line} of failures) logError(line)
  if (failures.length === 0) return undefined
  return new PodctlError(failures[0].error.code, failures[0].error.exitCode, summary)
}

/**
 * start, stop, update, stopp: crictl stops at the first argument that fails, with one error
 * `${doing(ref)}: ${cause}`. podctl still acts on every argument; the first failure in argument
 * order is reported the way crictl reports it.
 */
export function crictlFirstFailure(
  failures: ReadonlyArray<{ref: string; error: PodctlError}>,
  refs: readonly string[],
  doing: (ref: string) => string,
): PodctlError | undefined {
  const position = (ref: string) => {
    const index = refs.indexOf(givenRef(ref, refs))
    return index === -1 ? refs.length : index
  }

  const [first] = [...failures].sort((a, b) => position(a.ref) - position(b.ref))
  return first === undefined ? undefined : crictlFailure(doing(givenRef(first.ref, refs)), first.error)
}
