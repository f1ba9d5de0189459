import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {runtimeConfig} from '../lib/node/runtime-info.js'
import type {RuntimeConfigResponse} from '../generated/runtime/v1/api.js'

export default class RuntimeConfig extends BaseCommand<typeof RuntimeConfig> {
  static override summary = "Show the runtime's configuration the kubelet reads from it: the cgroup driver (CRI RuntimeConfig)."

  static override description = `One RuntimeConfig call. The table is crictl's line, "cgroup driver:   SYSTEMD" (or \
CGROUPFS), which the kubelet's cgroup driver must match; nothing is printed when the runtime reports no Linux \
configuration. JSON and YAML are the CRI answer, {"linux": {"cgroupDriver": "SYSTEMD"}}. RuntimeConfig is newer than \
containerd 1.6 and 1.7: such a runtime answers UNIMPLEMENTED, and podctl says so in one line and exits 6 \
(Unimplemented); podctl info shows containerd's own configuration (SystemdCgroup) instead.`

  static override examples = [example('The cgroup driver'), example('For a script', `-o jsonpath='{.linux.cgroupDriver}'`)]

  static override flags = {
    output: outputFlag(['table', 'json', 'yaml'], {templates: true}),
  }

  public async run(): Promise<RuntimeConfigResponse> {
    const response = await runtimeConfig(await this.client())
    await this.emit(response, () => (response.linux ? `cgroup driver:   ${response.linux.cgroupDriver}` : ''))
    return response
  }
}
