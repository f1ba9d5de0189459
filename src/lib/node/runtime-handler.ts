/**
 * The runtime handler a sandbox runs under. containerd reports it in PodSandbox(Status).runtime_handler;
 * CRI-O (up to at least 1.36) leaves that field empty for every sandbox, so an empty field there does
 * not mean the default handler. Both name it in the verbose PodSandboxStatus `info`: containerd as
 * `runtimeHandler`, CRI-O as the `io.kubernetes.cri-o.RuntimeHandler` annotation of the runtime spec.
 */

const CRIO_RUNTIME_HANDLER = 'io.kubernetes.cri-o.RuntimeHandler'
/** Version's runtime_name on CRI-O. */
export const CRIO_RUNTIME_NAME = 'cri-o'

interface SandboxInfo {
  runtimeHandler?: unknown
  runtimeSpec?: {annotations?: Record<string, unknown>}
}

/** The handler named in a verbose PodSandboxStatus `info`; undefined when it names none ("" is the default handler). */
export function runtimeHandlerFromInfo(info: Readonly<Record<string, string>> | undefined): string | undefined {
  const raw = info?.info
  if (!raw) return undefined
  let parsed: SandboxInfo
  try {
    parsed = JSON.parse(raw) as SandboxInfo
  } catch {
    return undefined
  }

  const handler = parsed.runtimeHandler ?? parsed.runtimeSpec?.annotations?.[CRIO_RUNTIME_HANDLER]
  return typeof handler === 'string' ? handler : undefined
}

/** How a table shows a handler: its name, "(default)" for the runtime's default, "?" when the runtime does not say. */
export function runtimeHandlerLabel(handler: string | undefined): string {
  if (handler === undefined) return '?'
  return handler || '(default)'
}
