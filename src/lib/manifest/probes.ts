/**
 * Probes (livenessProbe, readinessProbe, startupProbe) and lifecycle handlers (postStart, preStop)
 * of a container, read with the API server's defaulting (SetDefaults_Probe, SetDefaults_HTTPGetAction)
 * and validation (validateProbe, validateHandler, validateLifecycleHandler, validateSleepAction).
 */
import {type FieldReader, type Json} from './fields.js'
import type {
  ContainerPortModel,
  GrpcAction,
  HttpGetAction,
  LifecycleHandler,
  PortReference,
  ProbeHandler,
  ProbeModel,
  TcpSocketAction,
} from './model.js'
import {portName} from './names.js'
import {EXEC_RULE, HANDLER_RULE, LIFECYCLE_RULE} from './pod-fields.js'

export type ProbeField = 'livenessProbe' | 'readinessProbe' | 'startupProbe'

const PROBE_RULE = {
  api: 'Probe',
  supported: [
    'exec',
    'httpGet',
    'tcpSocket',
    'grpc',
    'initialDelaySeconds',
    'timeoutSeconds',
    'periodSeconds',
    'successThreshold',
    'failureThreshold',
    'terminationGracePeriodSeconds',
  ],
}
const HTTP_GET_RULE = {api: 'HTTPGetAction', supported: ['path', 'port', 'host', 'scheme', 'httpHeaders']}
const HTTP_HEADER_RULE = {api: 'HTTPHeader', supported: ['name', 'value']}
const TCP_SOCKET_RULE = {api: 'TCPSocketAction', supported: ['port', 'host']}
const GRPC_RULE = {api: 'GRPCAction', supported: ['port', 'service']}
const SLEEP_RULE = {api: 'SleepAction', supported: ['seconds']}

/** The API server's defaults for a probe's numbers (a 0 or absent value gets the default). */
export const PROBE_DEFAULTS = {initialDelaySeconds: 0, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3}
/** Kubernetes' default terminationGracePeriodSeconds, the bound of a sleep hook when the pod sets none. */
const DEFAULT_POD_GRACE_SECONDS = 30
/** RFC 7230 token: an HTTP header field name. */
const HTTP_TOKEN = /^[-!#$%&'*+.^_`|~0-9A-Za-z]+$/
const INT32_MAX = 2_147_483_647

export interface HandlerContext {
  /** The container's ports, for ports given by name. */
  ports: readonly ContainerPortModel[]
}

/** One of the three probes of a container, defaulted; undefined when absent. */
export function readProbe(
  r: FieldReader,
  value: Json | undefined,
  path: string,
  field: ProbeField,
  context: HandlerContext,
): ProbeModel | undefined {
  if (value === undefined || value === null) return undefined
  const p = r.object(value, path, PROBE_RULE)
  const handler = readProbeHandler(r, p, path, context)
  const number = (key: keyof typeof PROBE_DEFAULTS): number => {
    const given = r.integer(p[key], `${path}.${key}`, {min: 0, max: INT32_MAX})
    return given || PROBE_DEFAULTS[key]
  }

  const probe: ProbeModel = {
    handler,
    initialDelaySeconds: number('initialDelaySeconds'),
    periodSeconds: number('periodSeconds'),
    timeoutSeconds: number('timeoutSeconds'),
    successThreshold: number('successThreshold'),
    failureThreshold: number('failureThreshold'),
  }
  if (field !== 'readinessProbe' && probe.successThreshold !== 1)
    r.fail(`${path}.successThreshold`, `must be 1 for a ${field}, not ${probe.successThreshold}`)
  const grace = r.integer(p.terminationGracePeriodSeconds, `${path}.terminationGracePeriodSeconds`)
  if (grace !== undefined) {
    if (field === 'readinessProbe') r.fail(`${path}.terminationGracePeriodSeconds`, 'must not be set for a readinessProbe')
    if (grace <= 0) r.fail(`${path}.terminationGracePeriodSeconds`, `must be greater than 0, not ${grace}`)
    probe.terminationGracePeriodSeconds = grace
  }

  return probe
}

function readProbeHandler(r: FieldReader, p: Record<string, Json>, path: string, context: HandlerContext): ProbeHandler {
  const given = (['exec', 'httpGet', 'tcpSocket', 'grpc'] as const).filter((key) => p[key] !== undefined && p[key] !== null)
  if (given.length === 0) r.fail(path, 'must specify a handler type: exec, httpGet, tcpSocket or grpc')
  if (given.length > 1) r.fail(`${path}.${given[1]}`, `may not specify more than 1 handler type (${given.join(', ')} given)`)
  const where = `${path}.${given[0]}`
  switch (given[0]) {
    case 'exec':
      return {exec: {command: readExecCommand(r, p.exec, where)}}
    case 'httpGet':
      return {httpGet: readHttpGet(r, p.httpGet, where, context)}
    case 'tcpSocket':
      return {tcpSocket: readTcpSocket(r, p.tcpSocket, where, context)}
    case 'grpc':
      return {grpc: readGrpc(r, p.grpc, where)}
  }
}

function readExecCommand(r: FieldReader, value: Json | undefined, where: string): string[] {
  const exec = r.object(value, where, EXEC_RULE)
  const command = r.strings(exec.command, `${where}.command`, {allowEmpty: true})
  if (command.length === 0) r.fail(`${where}.command`, 'must not be empty')
  return command
}

/** A port by number (1-65535) or by name (IANA_SVC_NAME) that must be one of the container's ports. */
function readPort(r: FieldReader, value: Json | undefined, where: string, context: HandlerContext): PortReference {
  if (value === undefined || value === null || value === '') r.fail(where, 'is required')
  if (typeof value === 'string') {
    // An all-digit string is a name to the API server too, and IANA_SVC_NAME needs a letter.
    const problem = portName(value)
    if (problem) r.fail(where, `"${value}" is invalid: ${problem}`)
    if (!context.ports.some((port) => port.name === value)) {
      r.fail(where, `"${value}" is not the name of a port of this container; name it under ports or give the number`)
    }

    return value
  }

  return r.integer(value, where, {min: 1, max: 65_535})!
}

function readHttpGet(r: FieldReader, value: Json | undefined, where: string, context: HandlerContext): HttpGetAction {
  const h = r.object(value, where, HTTP_GET_RULE)
  const httpHeaders = r.list(h.httpHeaders, `${where}.httpHeaders`).map((entry, index) => {
    const at = `${where}.httpHeaders[${index}]`
    const header = r.object(entry, at, HTTP_HEADER_RULE)
    const name = r.requiredString(header.name, `${at}.name`)
    if (!HTTP_TOKEN.test(name)) r.fail(`${at}.name`, `"${name}" is not a valid HTTP header name`)
    return {name, value: r.string(header.value, `${at}.value`) ?? ''}
  })
  return {
    path: r.string(h.path, `${where}.path`) || '/',
    port: readPort(r, h.port, `${where}.port`, context),
    ...optionalHost(r.string(h.host, `${where}.host`)),
    scheme: r.oneOf(h.scheme, `${where}.scheme`, ['HTTP', 'HTTPS'] as const) ?? 'HTTP',
    httpHeaders,
  }
}

/** The host only when given: an absent one is the pod IP (and stays out of --dry-run and the annotations). */
function optionalHost(host: string | undefined): {host?: string} {
  return host ? {host} : {}
}

function readTcpSocket(r: FieldReader, value: Json | undefined, where: string, context: HandlerContext): TcpSocketAction {
  const t = r.object(value, where, TCP_SOCKET_RULE)
  return {port: readPort(r, t.port, `${where}.port`, context), ...optionalHost(r.string(t.host, `${where}.host`))}
}

function readGrpc(r: FieldReader, value: Json | undefined, where: string): GrpcAction {
  const g = r.object(value, where, GRPC_RULE)
  const port = r.integer(g.port, `${where}.port`, {min: 1, max: 65_535})
  if (port === undefined) r.fail(`${where}.port`, 'is required')
  return {port, service: r.string(g.service, `${where}.service`) ?? ''}
}

export interface LifecycleContext extends HandlerContext {
  /** The pod's terminationGracePeriodSeconds (absent: the default 30), the bound of a sleep hook. */
  gracePeriodSeconds?: number
}

/** lifecycle.postStart / preStop: exactly one of exec, httpGet, tcpSocket (kept, as the API server keeps it), sleep. */
export function readLifecycle(
  r: FieldReader,
  value: Json | undefined,
  path: string,
  context: LifecycleContext,
): {postStart?: LifecycleHandler; preStop?: LifecycleHandler} {
  const lifecycle = r.object(value, path, LIFECYCLE_RULE)
  const handler = (key: 'postStart' | 'preStop'): LifecycleHandler | undefined => {
    if (lifecycle[key] === undefined || lifecycle[key] === null) return undefined
    const where = `${path}.${key}`
    const h = r.object(lifecycle[key], where, HANDLER_RULE)
    const given = (['exec', 'httpGet', 'tcpSocket', 'sleep'] as const).filter((kind) => h[kind] !== undefined && h[kind] !== null)
    if (given.length === 0) r.fail(where, 'must specify a handler type: exec, httpGet or sleep')
    if (given.length > 1) r.fail(`${where}.${given[1]}`, `may not specify more than 1 handler type (${given.join(', ')} given)`)
    const at = `${where}.${given[0]}`
    switch (given[0]) {
      case 'exec':
        return {exec: {command: readExecCommand(r, h.exec, at)}}
      case 'httpGet':
        return {httpGet: readHttpGet(r, h.httpGet, at, context)}
      case 'tcpSocket':
        return {tcpSocket: readTcpSocket(r, h.tcpSocket, at, context)}
      case 'sleep': {
        const sleep = r.object(h.sleep, at, SLEEP_RULE)
        const seconds = r.integer(sleep.seconds, `${at}.seconds`)
        if (seconds === undefined) r.fail(`${at}.seconds`, 'is required')
        const grace = context.gracePeriodSeconds ?? DEFAULT_POD_GRACE_SECONDS
        if (seconds < 0 || seconds > grace) {
          r.fail(`${at}.seconds`, `must be non-negative and less than terminationGracePeriodSeconds (${grace}), not ${seconds}`)
        }

        return {sleep: {seconds}}
      }
    }
  }

  return {postStart: handler('postStart'), preStop: handler('preStop')}
}
