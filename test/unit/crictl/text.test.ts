/**
 * crictl v1.37's text, pure: Go's tabwriter as crictl sets it up, go-units sizes, Go's %g and
 * time.Time, logrus lines, and the pods/ps/images tables and -v blocks. Expected strings are what
 * /opt/crictl-ref/crictl printed on the lab for the same objects (ages pinned by `now`).
 */
/* eslint-disable @stylistic/max-len -- the expected tables are as wide as crictl prints them */
import {describe, expect, it} from 'vitest'

import type {Container, Image, PodSandbox} from '../../../src/generated/runtime/v1/api.js'
import {crictlImagesText, crictlPodsText, crictlPsText} from '../../../src/lib/crictl/lists.js'
import {containerBlock, goTimeString, podBlock} from '../../../src/lib/output/verbose-blocks.js'
import {logLine} from '../../../src/lib/crictl/log.js'
import {crictlFilesystemsText, crictlStatsText} from '../../../src/lib/crictl/stats-text.js'
import {tabwrite} from '../../../src/lib/crictl/tabwriter.js'
import {goFormatG, goHumanSize} from '../../../src/lib/crictl/units.js'

const NOW = Date.UTC(2026, 11, 2, 1, 30, 0)
const nanos = (msAgo: number) => `${BigInt(NOW - msAgo) * 1_000_000n}`

describe("Go's tabwriter as crictl sets it up (minwidth 20, padding 3)", () => {
  it('pads every cell but the last to the widest cell + 3, at least 20', () => {
    expect(
      tabwrite([
        ['IMAGE', 'TAG', 'SIZE'],
        ['localhost:5000/podctl/busybox', '1.36', '1.03MB'],
      ]),
    ).toBe(
      ['IMAGE                           TAG                 SIZE', 'localhost:5000/podctl/busybox   1.36                1.03MB', ''].join(
        '\n',
      ),
    )
  })

  it('keeps a trailing empty cell (its column padded) and counts code points, not bytes', () => {
    expect(
      tabwrite([
        ['a', ''],
        ['é', 'x'],
      ]),
    ).toBe(`a${' '.repeat(19)}\né${' '.repeat(19)}x\n`)
  })

  it('lays out a shorter row as its own column block, as Go does', () => {
    expect(tabwrite([['a', 'b', 'c'], ['only'], ['dddddddddddddddddddddd', 'e', 'f']])).toBe(
      `a${' '.repeat(19)}b${' '.repeat(19)}c\nonly\ndddddddddddddddddddddd   e${' '.repeat(19)}f\n`,
    )
  })
})

describe("go-units and Go's fmt", () => {
  it('sizes as crictl images (3 digits) and stats (4 digits) print them', () => {
    expect(goHumanSize(1_032_390, 3)).toBe('1.03MB')
    expect(goHumanSize(304_304, 3)).toBe('304kB')
    expect(goHumanSize(2_727_936)).toBe('2.728MB')
    expect(goHumanSize(208_896)).toBe('208.9kB')
    expect(goHumanSize(8192)).toBe('8.192kB')
    expect(goHumanSize(0)).toBe('0B')
    expect(goHumanSize(999_950, 3)).toBe('1e+03kB')
  })

  it('%g drops trailing zeros and switches to an exponent as Go does', () => {
    expect(goFormatG(1.5, 4)).toBe('1.5')
    expect(goFormatG(100, 3)).toBe('100')
    expect(goFormatG(1234.5, 3)).toBe('1.23e+03')
  })

  it("time.Time's String() in UTC, fraction without trailing zeros", () => {
    expect(goTimeString('1796174821393515793')).toBe('2026-12-02 01:27:01.393515793 +0000 UTC')
    expect(goTimeString('1796174821000000000')).toBe('2026-12-02 01:27:01 +0000 UTC')
  })
})

describe('logrus lines', () => {
  const at = new Date(Date.UTC(2026, 11, 2, 1, 39, 36))

  it('off a terminal: time, level and the message, quoted when logrus quotes it', () => {
    expect(logLine('info', 'No containers to remove', {now: at})).toBe(
      'time="2026-12-02T01:39:36Z" level=info msg="No containers to remove"\n',
    )
    expect(logLine('error', 'no such image nonexist', {now: at})).toBe(
      'time="2026-12-02T01:39:36Z" level=error msg="no such image nonexist"\n',
    )
    expect(logLine('warning', 'plain-word', {now: at})).toBe('time="2026-12-02T01:39:36Z" level=warning msg=plain-word\n')
    expect(logLine('error', 'container "abc" is running', {now: at})).toBe(
      'time="2026-12-02T01:39:36Z" level=error msg="container \\"abc\\" is running"\n',
    )
  })

  it('on a terminal: the level coloured and cut to four letters, the message padded to 44', () => {
    const escape = '\u001B'
    const info = logLine('info', 'No pods to remove', {terminal: true})
    expect(info.startsWith(`${escape}[36mINFO${escape}[0m[`)).toBe(true)
    expect(info.slice(info.indexOf(']'))).toBe(`] No pods to remove${' '.repeat(28)}\n`)
    expect(logLine('warning', 'w', {terminal: true}).startsWith(`${escape}[33mWARN${escape}[0m[`)).toBe(true)
  })
})

const pod = (over: Partial<PodSandbox> = {}): PodSandbox =>
  ({
    id: '96d22596c978acbadf20d6b0113ba22866f484bf1560f4d5246936d958554865',
    metadata: {name: 'ct-web', namespace: 'crictl-text', uid: 'ct-uid-1', attempt: 1},
    state: 'SANDBOX_READY',
    createdAt: nanos(7000),
    labels: {tier: 'web', app: 'ct'},
    annotations: {note: 'hello'},
    runtimeHandler: 'test-handler',
    ...over,
  }) as PodSandbox

const container = (over: Partial<Container> = {}): Container =>
  ({
    id: '56f018dc76ab1056aba632c1a8a4afdfdd40e83ceb346f8a1e366e89639e6625',
    podSandboxId: '96d22596c978acbadf20d6b0113ba22866f484bf1560f4d5246936d958554865',
    metadata: {name: 'app', attempt: 0},
    image: {image: 'localhost:5000/podctl/busybox:1.36', annotations: {}, userSpecifiedImage: '', runtimeHandler: ''},
    imageRef: 'sha256:a46bf356dea5bdaf3ea12beb1e74d900465efc28dcfbc41e51444cffcb49ee79',
    state: 'CONTAINER_RUNNING',
    createdAt: nanos(21_000),
    labels: {'io.kubernetes.pod.name': 'ct-web', k: 'v'},
    annotations: {},
    ...over,
  }) as Container

describe('crictl pods', () => {
  it('the table: ID cut to 13, age, state, names, attempt, runtime handler or (default)', () => {
    const other = pod({
      id: '9050039eb341a86e7ec67f4176f5cf1ba05e43c52490158829e35985aac86cea',
      runtimeHandler: '',
      state: 'SANDBOX_NOTREADY' as PodSandbox['state'],
    })
    expect(crictlPodsText([pod(), other], {now: NOW})).toBe(
      'POD ID              CREATED             STATE               NAME                NAMESPACE           ATTEMPT             RUNTIME\n' +
        '96d22596c978a       7 seconds ago       Ready               ct-web              crictl-text         1                   test-handler\n' +
        '9050039eb341a       7 seconds ago       NotReady            ct-web              crictl-text         1                   (default)\n',
    )
  })

  it('-q prints full IDs; -v a block per pod, labels and annotations sorted, a blank line after each', () => {
    expect(crictlPodsText([pod()], {quiet: true})).toBe('96d22596c978acbadf20d6b0113ba22866f484bf1560f4d5246936d958554865\n')
    expect(podBlock(pod({createdAt: '1796174821393515793'}))).toBe(
      'ID: 96d22596c978acbadf20d6b0113ba22866f484bf1560f4d5246936d958554865\nName: ct-web\nUID: ct-uid-1\n' +
        'Namespace: crictl-text\nAttempt: 1\nStatus: Ready\nCreated: 2026-12-02 01:27:01.393515793 +0000 UTC\n' +
        'Labels:\n\tapp -> ct\n\ttier -> web\nAnnotations:\n\tnote -> hello\nRuntime: test-handler\n\n',
    )
    // Attempt 0, no labels, no annotations: crictl leaves those lines out.
    expect(
      podBlock(
        pod({metadata: {name: 'b', namespace: 'n', uid: '', attempt: 0}, labels: {}, annotations: {}, createdAt: '1796174821000000000'}),
      ),
    ).toBe(
      'ID: 96d22596c978acbadf20d6b0113ba22866f484bf1560f4d5246936d958554865\nName: b\nNamespace: n\nStatus: Ready\n' +
        'Created: 2026-12-02 01:27:01 +0000 UTC\nRuntime: test-handler\n\n',
    )
  })
})

describe('crictl ps', () => {
  it('the table: the image as created (a bare digest cut to 13), POD and NAMESPACE from the kubelet labels, else "unknown"', async () => {
    const byId = container({
      id: 'd67662ed5a4e51412b4ceab5dfce4746b29aeb8dd57b19b5d6cfefcdf1ce3b23',
      image: {image: 'sha256:a46bf356dea5bdaf3ea12beb1e74d900465efc28dcfbc41e51444cffcb49ee79'} as Container['image'],
      state: 'CONTAINER_EXITED' as Container['state'],
      metadata: {name: 'done', attempt: 2},
      labels: {},
    })
    expect(await crictlPsText([container(), byId], {now: NOW})).toBe(
      'CONTAINER           IMAGE                                CREATED             STATE               NAME                ATTEMPT             POD ID              POD                 NAMESPACE\n' +
        '56f018dc76ab1       localhost:5000/podctl/busybox:1.36   21 seconds ago      Running             app                 0                   96d22596c978a       ct-web              unknown\n' +
        'd67662ed5a4e5       a46bf356dea5b                        21 seconds ago      Exited              done                2                   96d22596c978a       unknown             unknown\n',
    )
  })

  it('-r names the image by its first tag; --no-trunc keeps IDs and digests whole', async () => {
    const byId = container({
      image: {image: 'sha256:a46bf356dea5bdaf3ea12beb1e74d900465efc28dcfbc41e51444cffcb49ee79'} as Container['image'],
    })
    expect(
      await crictlPsText([byId], {now: NOW, repoImage: async (image) => (image === 'a46bf356dea5b' ? 'busybox:1.36' : image)}),
    ).toContain('56f018dc76ab1       busybox:1.36   ')
    expect(await crictlPsText([byId], {now: NOW, noTrunc: true})).toContain(
      '56f018dc76ab1056aba632c1a8a4afdfdd40e83ceb346f8a1e366e89639e6625   sha256:a46bf356dea5bdaf3ea12beb1e74d900465efc28dcfbc41e51444cffcb49ee79   ',
    )
  })

  it('-v: IDs, namespace, name, attempt, state, image, age, labels; a blank line after each', () => {
    expect(containerBlock(container(), NOW)).toBe(
      'ID: 56f018dc76ab1056aba632c1a8a4afdfdd40e83ceb346f8a1e366e89639e6625\n' +
        'PodID: 96d22596c978acbadf20d6b0113ba22866f484bf1560f4d5246936d958554865\nNamespace: unknown\nName: app\nAttempt: 0\nState: Running\n' +
        'Image: localhost:5000/podctl/busybox:1.36\nCreated: 21 seconds ago\nLabels:\n\tio.kubernetes.pod.name -> ct-web\n\tk -> v\n\n',
    )
  })
})

const busybox = {
  id: 'sha256:a46bf356dea5bdaf3ea12beb1e74d900465efc28dcfbc41e51444cffcb49ee79',
  repoTags: ['localhost:5000/podctl/busybox:1.36'],
  repoDigests: ['localhost:5000/podctl/busybox@sha256:bb17ecc07e7a30077e4dcd07bc152e4cf85d23565ceb75ccac19e86c7720ac23'],
  size: '1032390',
  pinned: false,
} as Image
const pause = {
  id: 'sha256:c397baccf8a2c2ef22a0eef1bd40d66141c07afefbd77df59fe2133b3cbfd755',
  repoTags: ['localhost:5000/podctl/pause:3.9'],
  repoDigests: [],
  size: '304304',
  pinned: false,
} as unknown as Image

describe('crictl images', () => {
  it('one row per tag (in the order given: list-calls sorts), sizes to 3 digits; --digests and --pinned add columns', () => {
    expect(crictlImagesText([busybox, pause], {})).toBe(
      'IMAGE                           TAG                 IMAGE ID            SIZE\n' +
        'localhost:5000/podctl/busybox   1.36                a46bf356dea5b       1.03MB\n' +
        'localhost:5000/podctl/pause     3.9                 c397baccf8a2c       304kB\n',
    )
    expect(crictlImagesText([busybox, pause], {digests: true, pinned: true})).toBe(
      'IMAGE                           TAG                 DIGEST              IMAGE ID            SIZE                PINNED\n' +
        'localhost:5000/podctl/busybox   1.36                bb17ecc07e7a3       a46bf356dea5b       1.03MB              false\n' +
        'localhost:5000/podctl/pause     3.9                 <none>              c397baccf8a2c       304kB               false\n',
    )
  })

  it('an untagged image shows its digest repository and <none>; -v prints blocks, -q IDs', () => {
    const untagged = {...busybox, repoTags: []} as Image
    expect(crictlImagesText([untagged], {})).toContain('localhost:5000/podctl/busybox   <none>              a46bf356dea5b')
    expect(crictlImagesText([pause], {verbose: true})).toBe(
      'ID: sha256:c397baccf8a2c2ef22a0eef1bd40d66141c07afefbd77df59fe2133b3cbfd755\nRepoTags: localhost:5000/podctl/pause:3.9\nSize: 304304\n\n',
    )
    expect(crictlImagesText([busybox, pause], {quiet: true})).toBe(`${busybox.id}\n${pause.id}\n`)
  })
})

describe('crictl stats and imagefsinfo -o table', () => {
  it('stats: the screen cleared, then the table (4-digit sizes, CPU with 2 decimals, SWAP); rows only for containers in both samples', () => {
    const sample = (cpu: string, timestamp: string, memory = '208896') =>
      ({
        attributes: {id: '56f018dc76ab1056aba632c1a8a4afdfdd40e83ceb346f8a1e366e89639e6625', metadata: {name: 'app', attempt: 0}},
        cpu: {timestamp, usageCoreNanoSeconds: {value: cpu}},
        memory: {workingSetBytes: {value: memory}},
        writableLayer: {usedBytes: {value: '8192'}, inodesUsed: {value: '5'}},
      }) as never
    expect(crictlStatsText([sample('1000000', '1000000000')], [sample('1500000', '2000000000')], false)).toBe(
      '\u001B[2J\u001B[HCONTAINER           NAME                CPU %               MEM                 DISK                INODES              SWAP\n' +
        '56f018dc76ab1       app                 0.05                208.9kB             8.192kB             5                   0B\n',
    )
    expect(crictlStatsText([], [sample('1500000', '2000000000')], false)).not.toContain('56f018dc76ab1')
    expect(crictlStatsText([sample('0', '1', '0')], [sample('0', '2', '0')], false)).not.toContain('app')
    expect(crictlStatsText([sample('0', '1', '0')], [sample('0', '2', '0')], true)).toContain('app')
  })

  it('imagefsinfo: container then image filesystems, indexed lines', () => {
    const usage = {
      timestamp: '1796174821393515793',
      fsId: {mountpoint: '/var/lib/x'},
      usedBytes: {value: '2727936'},
      inodesUsed: {value: '285'},
    }
    expect(crictlFilesystemsText({imageFilesystems: [usage], containerFilesystems: []} as never)).toBe(
      'Container Filesystem \nImage Filesystem \nTimeStamp[0]: 1796174821393515793\nDisk[0]: 2.728MB\nInodes[0]: 285\nMountpoint[0]: /var/lib/x\n',
    )
  })
})
