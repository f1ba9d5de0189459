/**
 * Whether a file is still the one seen before, without reading it: its size, mtime and inode. A
 * rename over it (how podctl writes every record and lock) makes a new inode; an edit in place a new
 * mtime or size. Watchers of manifests and the supervisor's looks at records and locks compare these.
 */
import {statSync} from 'node:fs'

export function fileSignature(info: {size: number; mtimeMs: number; ino: number}): string {
  return `${info.size}:${info.mtimeMs}:${info.ino}`
}

/** The file's signature now; undefined when there is no file there. */
export function currentSignature(path: string): string | undefined {
  const info = statSync(path, {throwIfNoEntry: false})
  return info && fileSignature(info)
}
