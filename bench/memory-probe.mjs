// Preloaded into a supervisor by bench/supervisor-memory.mjs (node --import): every 5 s it writes the
// process's memoryUsage() and V8's heap spaces to the file PODCTL_BENCH_MEMORY_FILE names, so the
// bench can tell the V8 heap's committed size from what is live, and both from the rest of the RSS.
import {writeFileSync} from 'node:fs'
import {getHeapSpaceStatistics} from 'node:v8'

const file = process.env.PODCTL_BENCH_MEMORY_FILE
if (file) {
  const write = () => {
    const spaces = {}
    for (const space of getHeapSpaceStatistics()) {
      spaces[space.space_name] = {committed: space.physical_space_size, used: space.space_used_size}
    }

    writeFileSync(file, JSON.stringify({usage: process.memoryUsage(), spaces}))
  }

  setInterval(write, 5000).unref()
}
