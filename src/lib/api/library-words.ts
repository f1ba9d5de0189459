/**
 * The library's own words in what it reports. run() shares `podctl run`'s code, whose errors and
 * warnings end in the CLI's hints (`raise --timeout`, `pass --replace`, `podctl logs web/app -n ci`);
 * a test author has options and methods instead. The CLI keeps its hints: the library maps them here,
 * where its calls return, so no message builder needs to know who asked.
 */
import {PodctlError} from '../errors.js'

/** CLI phrase → the library's, in order (longer phrases before the flags they contain). */
const WORDS: ReadonlyArray<readonly [RegExp, string]> = [
  [/see its log with: podctl logs [^/\s]+\/(\S+) -n \S+/g, "see its log with: pod.container('$1').logs()"],
  [/, or remove it with: podctl kill \S+ -n \S+/g, ''],
  [/remove it with: podctl kill \S+ -n \S+/g, 'remove it with a run of its manifest with replace: true'],
  [/usage: podctl exec CONTAINER -- CMD \[ARG\.\.\.\]/g, 'pass exec() the command and its arguments'],
  [/run podctl as root/g, 'run the test process as root'],
  [/podctl cp (refuses|extracts|does not)/g, 'the copy $1'],
  [/--timeout/g, 'timeoutMs'],
  [/--replace/g, 'replace: true'],
  [/--force\b/g, 'force: true'],
]

/** A line (a message, a warning) in the library's words. */
export function inLibraryWords(line: string): string {
  let mapped = line
  for (const [cli, library] of WORDS) mapped = mapped.replace(cli, library)
  return mapped
}

/** Rethrows `error` with its message in the library's words (the same error, class and code). */
export function rethrowInLibraryWords(error: unknown): never {
  if (error instanceof PodctlError) {
    const mapped = inLibraryWords(error.message)
    if (mapped !== error.message) {
      error.message = mapped
      // The stack's first line repeats the message: say it the same way there.
      if (error.stack) error.stack = inLibraryWords(error.stack)
    }
  }

  throw error
}
