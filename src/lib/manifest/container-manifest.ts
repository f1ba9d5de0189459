/**
 * The way back from the pod model to a v1 Container (`podctl export`): each field as the API
 * names it, defaults as the API server filled them (what `kubectl get -o yaml` shows), empty
 * lists and unset options left out. The model keeps references (secretKeyRef, envFrom) and never
 * values of Secrets, so nothing here can print one.
 */
import type {
  ContainerModel,
  EnvVarModel,
  HttpGetAction,
  LifecycleHandler,
  ProbeHandler,
  ProbeModel,
  ResourceListModel,
  SecurityContextModel,
  VolumeMountModel,
} from './model.js'

/** A plain JSON object of the API's shape (what the YAML or JSON printer takes). */
export type ManifestObject = Record<string, unknown>

/** The object without its undefined values, or undefined when nothing is left (omitempty). */
export function compact(object: ManifestObject): ManifestObject | undefined {
  const kept = Object.entries(object).filter(([, value]) => value !== undefined)
  return kept.length === 0 ? undefined : Object.fromEntries(kept)
}

const nonEmpty = <T>(list: readonly T[] | undefined): T[] | undefined => (list && list.length > 0 ? [...list] : undefined)
const onlyTrue = (flag: boolean | undefined): true | undefined => (flag ? true : undefined)

function httpGetManifest(action: HttpGetAction): ManifestObject {
  return compact({
    path: action.path === '' ? undefined : action.path,
    port: action.port,
    host: action.host,
    scheme: action.scheme,
    httpHeaders: nonEmpty(action.httpHeaders),
  })!
}

/** A probe's or hook's handler: the model keeps the API's own keys, with httpGet's defaults filled. */
export function handlerManifest(handler: ProbeHandler | LifecycleHandler): ManifestObject {
  if ('httpGet' in handler) return {httpGet: httpGetManifest(handler.httpGet)}
  if ('tcpSocket' in handler) return {tcpSocket: compact({port: handler.tcpSocket.port, host: handler.tcpSocket.host})}
  if ('grpc' in handler) return {grpc: compact({port: handler.grpc.port, service: handler.grpc.service || undefined})}
  if ('sleep' in handler) return {sleep: {seconds: handler.sleep.seconds}}
  return {exec: {command: [...handler.exec.command]}}
}

export function probeManifest(probe: ProbeModel | undefined): ManifestObject | undefined {
  if (!probe) return undefined
  return compact({
    ...handlerManifest(probe.handler),
    initialDelaySeconds: probe.initialDelaySeconds || undefined,
    periodSeconds: probe.periodSeconds,
    timeoutSeconds: probe.timeoutSeconds,
    successThreshold: probe.successThreshold,
    failureThreshold: probe.failureThreshold,
    terminationGracePeriodSeconds: probe.terminationGracePeriodSeconds,
  })
}

function envManifest(variable: EnvVarModel): ManifestObject {
  if (!variable.valueFrom) return {name: variable.name, value: variable.value}
  const {fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef, fileKeyRef} = variable.valueFrom
  const keyRef = (ref: {name: string; key: string; optional: boolean} | undefined) =>
    ref && compact({name: ref.name, key: ref.key, optional: onlyTrue(ref.optional)})
  const valueFrom = compact({
    fieldRef: fieldRef && {fieldPath: fieldRef.fieldPath},
    resourceFieldRef: resourceFieldRef && compact({...resourceFieldRef}),
    configMapKeyRef: keyRef(configMapKeyRef),
    secretKeyRef: keyRef(secretKeyRef),
    fileKeyRef: fileKeyRef && compact({...fileKeyRef, optional: onlyTrue(fileKeyRef.optional)}),
  })
  return {name: variable.name, valueFrom}
}

function resourceList(list: ResourceListModel): ManifestObject | undefined {
  return compact({cpu: list.cpu, memory: list.memory})
}

export function resourcesManifest(resources: {limits: ResourceListModel; requests: ResourceListModel} | undefined) {
  return resources && compact({limits: resourceList(resources.limits), requests: resourceList(resources.requests)})
}

function securityContextManifest(context: SecurityContextModel | undefined): ManifestObject | undefined {
  if (!context) return undefined
  const {capabilities, ...rest} = context
  const caps = capabilities && compact({add: nonEmpty(capabilities.add), drop: nonEmpty(capabilities.drop)})
  return compact({...rest, capabilities: caps})
}

function mountManifest(mount: VolumeMountModel): ManifestObject {
  return compact({...mount, readOnly: onlyTrue(mount.readOnly)})!
}

/** A v1 Container of the model's container (init or app). */
export function containerManifest(container: ContainerModel): ManifestObject {
  const lifecycle = compact({
    postStart: container.lifecycle.postStart && handlerManifest(container.lifecycle.postStart),
    preStop: container.lifecycle.preStop && handlerManifest(container.lifecycle.preStop),
  })
  return compact({
    name: container.name,
    image: container.image,
    imagePullPolicy: container.imagePullPolicy,
    command: nonEmpty(container.command),
    args: nonEmpty(container.args),
    workingDir: container.workingDir,
    env: nonEmpty(container.env.map((variable) => envManifest(variable))),
    envFrom: nonEmpty(
      container.envFrom?.map((source) =>
        compact({
          prefix: source.prefix || undefined,
          configMapRef: source.configMapRef && compact({name: source.configMapRef.name, optional: onlyTrue(source.configMapRef.optional)}),
          secretRef: source.secretRef && compact({name: source.secretRef.name, optional: onlyTrue(source.secretRef.optional)}),
        }),
      ),
    ),
    ports: nonEmpty(container.ports.map((port) => compact({...port})!)),
    resources: resourcesManifest(container.resources),
    resizePolicy: container.resizePolicy,
    securityContext: securityContextManifest(container.securityContext),
    lifecycle,
    livenessProbe: probeManifest(container.livenessProbe),
    readinessProbe: probeManifest(container.readinessProbe),
    startupProbe: probeManifest(container.startupProbe),
    restartPolicy: container.restartPolicy,
    volumeMounts: nonEmpty(container.volumeMounts.map((mount) => mountManifest(mount))),
    terminationMessagePath: container.terminationMessagePath,
    terminationMessagePolicy: container.terminationMessagePolicy,
    stdin: onlyTrue(container.stdin),
    stdinOnce: onlyTrue(container.stdinOnce),
    tty: onlyTrue(container.tty),
  })!
}

/** What a crictl container config set that a v1 Container cannot say (for the note on stderr). */
export function crictlOnlyContainerFields(container: ContainerModel): string[] {
  const fields: string[] = []
  if (container.attempt) fields.push('metadata.attempt')
  if (container.namespaceOptions) fields.push('linux.security_context.namespace_options')
  if (container.extraLabels && Object.keys(container.extraLabels).length > 0) fields.push('labels')
  if (container.extraAnnotations && Object.keys(container.extraAnnotations).length > 0) fields.push('annotations')
  if (container.logPath) fields.push('log_path')
  return fields
}
