/**
 * The verbose `info` map of the CRI status calls is string → string, but runtimes put JSON
 * documents in the values (containerd: `info` holds the OCI spec, pid, snapshotter…).
 */

/** Values that parse as JSON become JSON; anything else stays the string it was. */
export function parseVerboseInfo(info: Readonly<Record<string, string>> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, text] of Object.entries(info ?? {})) {
    try {
      out[key] = JSON.parse(text)
    } catch {
      out[key] = text
    }
  }

  return out
}

/**
 * Adds each info key at the top level of `document`, crictl's layout; a key that would overwrite
 * one of ours is kept under `<key>Info` instead.
 */
export function withVerboseInfo(
  document: Record<string, unknown>,
  info: Readonly<Record<string, string>> | undefined,
): Record<string, unknown> {
  for (const [key, value] of Object.entries(parseVerboseInfo(info))) {
    document[key in document ? `${key}Info` : key] = value
  }

  return document
}
