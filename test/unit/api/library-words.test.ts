import {describe, expect, it} from 'vitest'

import {inLibraryWords, rethrowInLibraryWords} from '../../../src/lib/api/library-words.js'
import {AlreadyExistsError, DeadlineExceededError} from '../../../src/lib/errors.js'

describe("the library's words", () => {
  it('says options and methods where the CLI says flags and commands', () => {
    expect(inLibraryWords('pod web_ci: still waiting for app to run when --timeout ran out; raise --timeout to wait longer')).toBe(
      'pod web_ci: still waiting for app to run when timeoutMs ran out; raise timeoutMs to wait longer',
    )
    expect(
      inLibraryWords(
        'pod "web" already exists in namespace "ci" (sandbox 0123456789ab, attempt 0); ' +
          'pass --replace to kill it and start a new one, or remove it with: podctl kill web -n ci',
      ),
    ).toBe(
      'pod "web" already exists in namespace "ci" (sandbox 0123456789ab, attempt 0); pass replace: true to kill it and start a new one',
    )
    expect(inLibraryWords('app exited with 1; see its log with: podctl logs web/app -n ci')).toBe(
      "app exited with 1; see its log with: pod.container('app').logs()",
    )
    expect(inLibraryWords('left behind pod web_ci (sandbox 0123); remove it with: podctl kill web -n ci')).toBe(
      'left behind pod web_ci (sandbox 0123); remove it with a run of its manifest with replace: true',
    )
    expect(
      inLibraryWords('command "sleep 9" did not finish within 1s (--timeout) and was stopped; raise --timeout to give it longer'),
    ).toBe('command "sleep 9" did not finish within 1s (timeoutMs) and was stopped; raise timeoutMs to give it longer')
    expect(inLibraryWords('no command given; usage: podctl exec CONTAINER -- CMD [ARG...]')).toBe(
      'no command given; pass exec() the command and its arguments',
    )
    expect(inLibraryWords('a kubelet uses this runtime; hand the pod to it, or run anyway with --force')).toBe(
      'a kubelet uses this runtime; hand the pod to it, or run anyway with force: true',
    )
  })

  it('rethrows the same error, class and code kept, its message and stack in the library words', () => {
    const deadline = new DeadlineExceededError('pod web_ci is not ready after 5s (--timeout)')
    expect(() => rethrowInLibraryWords(deadline)).toThrow(deadline)
    expect(deadline).toMatchObject({code: 'DeadlineExceeded', message: 'pod web_ci is not ready after 5s (timeoutMs)'})
    expect(deadline.stack).not.toContain('--timeout')
    const exists = new AlreadyExistsError('pod "web" exists; pass --replace')
    expect(() => rethrowInLibraryWords(exists)).toThrow(AlreadyExistsError)
    expect(exists.message).toBe('pod "web" exists; pass replace: true')
  })
})
