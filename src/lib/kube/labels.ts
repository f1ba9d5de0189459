/** The labels and annotations the kubelet puts on sandboxes and containers (kuberuntime labels.go). */
export const PodLabel = {
  name: 'io.kubernetes.pod.name',
  namespace: 'io.kubernetes.pod.namespace',
  uid: 'io.kubernetes.pod.uid',
} as const

export const ContainerLabel = {
  name: 'io.kubernetes.container.name',
} as const

export const ContainerAnnotation = {
  hash: 'io.kubernetes.container.hash',
  restartCount: 'io.kubernetes.container.restartCount',
  terminationMessagePath: 'io.kubernetes.container.terminationMessagePath',
  terminationMessagePolicy: 'io.kubernetes.container.terminationMessagePolicy',
  preStopHandler: 'io.kubernetes.container.preStopHandler',
  postStartHandler: 'io.kubernetes.container.postStartHandler',
  ports: 'io.kubernetes.container.ports',
  podTerminationGracePeriod: 'io.kubernetes.pod.terminationGracePeriod',
} as const

/** The kubelet's pod full name (kubecontainer.GetPodFullName): `name_namespace`. */
export function podFullName(name: string, namespace: string): string {
  return `${name}_${namespace}`
}

/**
 * podctl's own annotations. The kubelet keeps the pod spec in memory; podctl only has the runtime,
 * so `run` records what `kill` and `status POD` need to behave like the kubelet later.
 */
export const PodctlAnnotation = {
  /** On the sandbox: Always | OnFailure | Never (absent → Always, the Kubernetes default). */
  restartPolicy: 'io.podctl.restartPolicy',
  /** On a container: init | app (absent → app). */
  containerType: 'io.podctl.containerType',
  /** On the sandbox: the host directory podctl made for the pod (emptyDir, /etc/hosts), removed with it. */
  podDirectory: 'io.podctl.podDirectory',
} as const

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never'
export type ContainerType = 'init' | 'app'

/** The kubelet's pod description in messages (format.Pod): `name_namespace(uid)`. */
export function podDescription(name: string, namespace: string, uid: string): string {
  return `${name}_${namespace}(${uid})`
}
