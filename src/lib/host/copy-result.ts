/** What `podctl cp` reports, shared by its copies of files and of tar streams. */
import type {IdRange} from './proc.js'

export interface CopyResult {
  direction: 'in' | 'out'
  containerId: string
  files: number
  directories: number
  symlinks: number
  bytes: number
  /** What was not copied (devices, sockets, FIFOs; in a tar stream also hard links it cannot make), by its path. */
  skipped: string[]
}

/** The container's id maps: how ids inside its user namespace are seen on the host. */
export interface Owners {
  uid: IdRange[]
  gid: IdRange[]
}

export function emptyResult(direction: 'in' | 'out', containerId: string): CopyResult {
  return {direction, containerId, files: 0, directories: 0, symlinks: 0, bytes: 0, skipped: []}
}

function counted(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`
}

/** "3 files (12 bytes), 1 directory, 2 symlinks": what a copy did, for a summary or a failure's message. */
export function copiedWhat(result: CopyResult): string {
  const what = [`${counted(result.files, 'file', 'files')} (${counted(result.bytes, 'byte', 'bytes')})`]
  if (result.directories > 0) what.push(counted(result.directories, 'directory', 'directories'))
  if (result.symlinks > 0) what.push(counted(result.symlinks, 'symlink', 'symlinks'))
  return what.join(', ')
}
