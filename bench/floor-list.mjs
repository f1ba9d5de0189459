// The floor for any Node CLI that lists from a CRI runtime: grpc-js and unary List calls, nothing
// else (an empty request encodes to zero bytes; the responses are left undecoded).
//   node bench/floor-list.mjs ENDPOINT [ListPodSandbox|ListContainers|ListPodSandbox+ListContainers] [WINDOW_BYTES]
// Methods joined by "+" are called at once on one channel, as `podctl pods` calls its two.
// WINDOW_BYTES: the HTTP/2 flow-control window podctl asks for (grpc-js's default is 64 KiB).
import {Client, credentials} from '@grpc/grpc-js'

const [endpoint = process.env.CONTAINER_RUNTIME_ENDPOINT, methods = 'ListPodSandbox', window] = process.argv.slice(2)
const client = new Client(endpoint, credentials.createInsecure(), {
  'grpc.max_receive_message_length': 64 << 20,
  ...(window ? {'grpc-node.flow_control_window': Number(window)} : {}),
})
const calls = methods.split('+').map(
  (method) =>
    new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        `/runtime.v1.RuntimeService/${method}`,
        () => Buffer.alloc(0),
        (buffer) => buffer,
        {},
        {deadline: Date.now() + 10_000},
        (error, response) => (error ? reject(error) : resolve(response)),
      )
    }),
)
try {
  const responses = await Promise.all(calls)
  console.log(responses.map((response) => `${response.length} bytes`).join(', '))
} catch (error) {
  console.error(error.message)
  process.exitCode = 1
} finally {
  // Closed, nothing keeps Node alive: it ends with this code.
  client.close()
}
