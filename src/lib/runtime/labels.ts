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
 * podctl's own annotations (lifecycle contract): the kubelet keeps the pod spec, podctl only has
 * the runtime, so `run` records what `kill` and `status` need to behave like the kubelet.
 */
export const PodctlAnnotation = {
  /** On the sandbox: Always | OnFailure | Never (absent → Always, the Kubernetes default). */
  restartPolicy: 'io.podctl.restartPolicy',
  /** On each container: init | app. */
  containerType: 'io.podctl.containerType',
} as const

/** The kubelet's pod description in messages (format.Pod): `name_namespace(uid)`. */
export function podDescription(name: string, namespace: string, uid: string): string {
  return `${name}_${namespace}(${uid})`
}
