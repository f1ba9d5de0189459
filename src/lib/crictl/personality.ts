/**
 * Which program podctl is being: itself, or crictl v1.29 (issue 20). Invoked as `crictl` (bin/crictl,
 * or the single binary or a link to it named crictl), podctl takes crictl's command line and answers
 * with crictl's text, JSON and exit codes; everything below the command line (the CRI client, its
 * deadlines and limits) is the same. The entry sets it once, before oclif runs the command;
 * PODCTL_PERSONALITY overrides the name.
 */
import {basename} from 'node:path'

export type Personality = 'podctl' | 'crictl'

let current: Personality = personalityFromEnv() ?? 'podctl'

/** PODCTL_PERSONALITY=crictl|podctl: the personality asked for explicitly (tests, wrappers), whatever the program's name. */
export function personalityFromEnv(env: NodeJS.ProcessEnv = process.env): Personality | undefined {
  const asked = env.PODCTL_PERSONALITY
  return asked === 'crictl' || asked === 'podctl' ? asked : undefined
}

export function setPersonality(personality: Personality): void {
  current = personality
}

export function personality(): Personality {
  return current
}

/** True when podctl runs as crictl: commands then print what crictl prints. */
export function isCrictl(): boolean {
  return current === 'crictl'
}

/** The personality a program's name asks for: crictl for `crictl` (or `crictl.exe`, `crictl-v1.29`), else podctl. */
export function personalityOf(programPath: string | undefined): Personality {
  if (!programPath) return 'podctl'
  return /^crictl(?:$|[.-])/.test(basename(programPath)) ? 'crictl' : 'podctl'
}
