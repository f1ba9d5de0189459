/**
 * Secret values are never printed. `run` records on each container the NAMES of its env variables
 * taken from a Secret (io.podctl.secretEnv, kube/labels.ts); `inspect` shows those variables'
 * values as <redacted> wherever the runtime's answer holds them: the CRI config's `envs`, the OCI
 * spec's `process.env` ("NAME=value") and, where a $(VAR) reference put a value into them, the
 * command and args. `crictl inspect` (or the runtime itself) still shows them.
 */
import {REDACTED, secretEnvNamesOf} from '../kube/labels.js'

type JsonObject = Record<string, unknown>
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value)
const stringMap = (value: unknown): Record<string, string> | undefined =>
  isObject(value)
    ? Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
    : undefined

/** The secret variable names recorded on the document's container: the status's annotations, else the config's. */
export function secretNamesOfDocument(document: JsonObject): Set<string> {
  const status = isObject(document.status) ? document.status : {}
  const info = isObject(document.info) ? document.info : {}
  const config = isObject(info.config) ? info.config : {}
  return new Set([...secretEnvNamesOf(stringMap(status.annotations)), ...secretEnvNamesOf(stringMap(config.annotations))])
}

/** The CRI config's `envs` ([{key, value}]) redacted; returns the values it hid. */
function redactEnvs(envs: unknown, names: ReadonlySet<string>, hidden: Set<string>): unknown {
  if (!Array.isArray(envs)) return envs
  return envs.map((entry: unknown) => {
    if (!isObject(entry) || typeof entry.key !== 'string' || !names.has(entry.key)) return entry
    if (typeof entry.value === 'string' && entry.value !== '') hidden.add(entry.value)
    return {...entry, value: REDACTED}
  })
}

/** The OCI spec's `process.env` ("NAME=value") redacted; returns the values it hid. */
function redactProcessEnv(env: unknown, names: ReadonlySet<string>, hidden: Set<string>): unknown {
  if (!Array.isArray(env)) return env
  return env.map((entry: unknown) => {
    if (typeof entry !== 'string') return entry
    const equals = entry.indexOf('=')
    const name = equals === -1 ? entry : entry.slice(0, equals)
    if (equals === -1 || !names.has(name)) return entry
    const value = entry.slice(equals + 1)
    if (value !== '') hidden.add(value)
    return `${name}=${REDACTED}`
  })
}

/** Every occurrence of a hidden value in a list of strings (command, args) replaced, longest first. */
function redactArgv(argv: unknown, hidden: ReadonlySet<string>): unknown {
  if (!Array.isArray(argv) || hidden.size === 0) return argv
  const values = [...hidden].sort((a, b) => b.length - a.length)
  return argv.map((arg: unknown) => (typeof arg === 'string' ? values.reduce((text, value) => text.split(value).join(REDACTED), arg) : arg))
}

/**
 * A container's verbose info (containerd: `{config: <CRI ContainerConfig>, runtimeSpec: <OCI spec>, ...}`)
 * with the named variables redacted (a copy; the input is untouched).
 */
export function redactVerboseInfo(info: unknown, names: ReadonlySet<string>): unknown {
  if (!isObject(info) || names.size === 0) return info
  const hidden = new Set<string>()
  const out: JsonObject = {...info}
  if (isObject(info.config)) out.config = redactContainerConfig(info.config, names, hidden)
  if (isObject(info.runtimeSpec) && isObject(info.runtimeSpec.process)) {
    const process = {...info.runtimeSpec.process, env: redactProcessEnv(info.runtimeSpec.process.env, names, hidden)}
    out.runtimeSpec = {...info.runtimeSpec, process}
  }

  // A second pass: values hidden from one env list are hidden from every argv.
  if (isObject(out.config))
    out.config = {...out.config, command: redactArgv(out.config.command, hidden), args: redactArgv(out.config.args, hidden)}
  if (isObject(out.runtimeSpec) && isObject(out.runtimeSpec.process)) {
    out.runtimeSpec = {...out.runtimeSpec, process: {...out.runtimeSpec.process, args: redactArgv(out.runtimeSpec.process.args, hidden)}}
  }

  return out
}

/** A CRI ContainerConfig (plain JSON) with the named variables' values, and any of them in command/args, redacted. */
export function redactContainerConfig(config: JsonObject, names: ReadonlySet<string>, hidden = new Set<string>()): JsonObject {
  if (names.size === 0) return config
  const envs = redactEnvs(config.envs, names, hidden)
  const out: JsonObject = {...config, envs}
  for (const key of ['command', 'args'] as const) if (key in config) out[key] = redactArgv(config[key], hidden)
  return out
}

/** An `inspect` document (`{status, info, ...}`) with the secret variables its container records redacted. */
export function redactInspectDocument(document: JsonObject): JsonObject {
  const names = secretNamesOfDocument(document)
  if (names.size === 0 || !('info' in document)) return document
  return {...document, info: redactVerboseInfo(document.info, names)}
}
