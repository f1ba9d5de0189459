// The floor for any Node CLI that lists from a CRI runtime: grpc-js and one unary List call,
// nothing else (an empty request encodes to zero bytes; the response is left undecoded).
//   node bench/floor-list.mjs ENDPOINT [ListPodSandbox|ListContainers] [WINDOW_BYTES]
// WINDOW_BYTES: the HTTP/2 flow-control window podctl asks for (grpc-js's default is 64 KiB).
import {Client, credentials} from '@grpc/grpc-js'

const [endpoint = process.env.CONTAINER_RUNTIME_ENDPOINT, method = 'ListPodSandbox', window] = process.argv.slice(2)
const client = new Client(endpoint, credentials.createInsecure(), {
  'grpc.max_receive_message_length': 64 << 20,
  ...(window ? {'grpc-node.flow_control_window': Number(window)} : {}),
})
client.makeUnaryRequest(
  `/runtime.v1.RuntimeService/${method}`,
  () => Buffer.alloc(0),
  (buffer) => buffer,
  {},
  {deadline: Date.now() + 10_000},
  (error, response) => {
    client.close()
    if (error) {
      console.error(error.message)
      // The client is closed, so nothing keeps Node alive: it ends with this code.
      process.exitCode = 1
      return
    }

    console.log(`${response.length} bytes`)
  },
)
