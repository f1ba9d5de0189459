/**
 * env fileKeyRef (KEP-3721, EnvFiles): a key of a KEY=VALUE file inside one of the pod's emptyDir
 * volumes, read when the container that uses it starts (so after the init containers that write
 * it). The file is found inside the volume only: a symlink out of it is refused, so a container
 * cannot make podctl read a host file into another container's environment.
 */
import {closeSync, constants, fstatSync, openSync, readSync, realpathSync} from 'node:fs'
import {join, sep} from 'node:path'

import type {FileKeyRefModel} from '../../manifest/model.js'

/** An env file is configuration, not data: beyond this it is refused rather than read. */
export const MAX_ENV_FILE_BYTES = 64 * 1024

/** A file that cannot be read or parsed, or a missing key: the container's CreateContainerConfigError. */
export class EnvFileError extends Error {}

/**
 * KEY=VALUE lines: blank lines and lines starting with # are skipped, a leading `export ` is
 * allowed, a value in single quotes is taken as written, one in double quotes has \", \\ and \n
 * unescaped; an unquoted value is trimmed. A line without '=' makes the file invalid.
 */
export function parseEnvFile(text: string, where: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const eq = line.indexOf('=')
    const key = (eq > 0 ? line.slice(0, eq) : '').trim().replace(/^export\s+/, '')
    if (eq <= 0 || key === '' || /\s/.test(key)) throw new EnvFileError(`${where}: line ${index + 1} is not KEY=VALUE`)
    out.set(key, unquote(line.slice(eq + 1).trim()))
  }

  return out
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1)
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    return value.slice(1, -1).replaceAll(/\\(["\\n])/g, (_match, char: string) => (char === 'n' ? '\n' : char))
  }

  return value
}

/**
 * The value of the key, or undefined when the file or key is missing and the reference is
 * optional (the variable is then not set). `volumeDir` is the emptyDir's directory on the host.
 */
export function readFileKey(ref: FileKeyRefModel, volumeDir: string): string | undefined {
  const where = `env file "${ref.path}" in volume "${ref.volumeName}"`
  let text: string
  try {
    text = readInside(volumeDir, ref.path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (ref.optional && (code === 'ENOENT' || code === 'ENOTDIR')) return undefined
    if (error instanceof EnvFileError) throw error
    const reason = code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file' : (code ?? (error as Error).message)
    throw new EnvFileError(`couldn't read ${where}: ${reason}`)
  }

  const values = parseEnvFile(text, where)
  if (values.has(ref.key)) return values.get(ref.key)
  if (ref.optional) return undefined
  throw new EnvFileError(`couldn't find key ${ref.key} in ${where}`)
}

function readInside(volumeDir: string, path: string): string {
  const root = realpathSync(volumeDir)
  const file = realpathSync(join(root, path))
  if (file !== root && !file.startsWith(`${root}${sep}`)) {
    throw new EnvFileError(`env file "${path}" leads out of its volume (a symlink); podctl reads files inside the volume only`)
  }

  // Without blocking: a FIFO put there by a container must not hang the start.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const info = fstatSync(fd)
    if (!info.isFile()) throw new EnvFileError(`env file "${path}" is not a regular file`)
    if (info.size > MAX_ENV_FILE_BYTES) throw new EnvFileError(`env file "${path}" is larger than ${MAX_ENV_FILE_BYTES / 1024} KiB`)
    const buffer = Buffer.alloc(info.size)
    const read = readSync(fd, buffer, 0, info.size, 0)
    return buffer.subarray(0, read).toString('utf8')
  } finally {
    closeSync(fd)
  }
}
