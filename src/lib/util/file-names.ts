/**
 * File names built from Kubernetes names. A pod's name may be 253 characters and its namespace 63, so
 * `<name>_<namespace>.lock` or `<namespace>_<name>_<uid>` can pass Linux's 255-byte limit on one
 * path component (ENAMETOOLONG). The kubelet keys directories by uid and cuts its log links at 255
 * (kuberuntime's logSymlink); podctl does the same wherever a name is part of a file name. Names
 * that fit are left as they always were, so files written before stay where they are.
 */
import {createHash} from 'node:crypto'

import {cutToBytes, NAME_MAX} from './path-component.js'

/** How long the digest that keeps two cut names apart is (hex characters of sha256). */
const DIGEST_LENGTH = 16

/**
 * `${name}${suffix}` when it fits in `max` bytes; else the name cut, `~` and a digest of the whole
 * name, then the suffix: still one file per name, and a prefix a person recognises.
 */
export function fittedFileName(name: string, suffix = '', max = NAME_MAX): string {
  if (Buffer.byteLength(name + suffix) <= max) return name + suffix
  const digest = createHash('sha256').update(name).digest('hex').slice(0, DIGEST_LENGTH)
  return `${cutToBytes(name, max - Buffer.byteLength(suffix) - DIGEST_LENGTH - 1)}~${digest}${suffix}`
}
