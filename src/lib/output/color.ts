import {Chalk, type ChalkInstance, supportsColor} from 'chalk'

export interface ColorChoice {
  /** --color / --no-color; undefined means decide from the terminal. */
  flag?: boolean
  env?: NodeJS.ProcessEnv
  isTTY?: boolean
}

/** Colour only on a TTY, never with NO_COLOR or --no-color (and on request with --color). */
export function wantsColor({flag, env = process.env, isTTY = Boolean(process.stdout.isTTY)}: ColorChoice): boolean {
  if (flag === false) return false
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  if (flag === true) return true
  return isTTY && env.TERM !== 'dumb'
}

export function makeChalk(enabled: boolean): ChalkInstance {
  const level = enabled ? Math.max(1, supportsColor ? supportsColor.level : 1) : 0
  return new Chalk({level: level as 0 | 1 | 2 | 3})
}
